<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Exception\InvalidHeaderException;
use Pagamentos\Exception\InvalidPayloadException;
use Pagamentos\Exception\InvalidSecretException;
use Pagamentos\Exception\MissingHeaderException;
use Pagamentos\Exception\RawBodyRequiredException;
use Pagamentos\Exception\SignatureMismatchException;
use Pagamentos\Exception\StaleTimestampException;
use Pagamentos\Exception\WebhookVerificationException;
use Pagamentos\Resource\Event;
use Pagamentos\Resource\Payment;
use Pagamentos\Webhook;
use PHPUnit\Framework\TestCase;

/**
 * Webhook::verify() on its own (the deliveries of a real server are in WebhookDeliveryTest).
 */
final class WebhookTest extends TestCase
{
    // The Standard Webhooks specification's published test vector.
    private const VECTOR_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const VECTOR_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    private const VECTOR_TIMESTAMP = 1614265330;
    private const VECTOR_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

    private const SECRET = 'whsec_c2VjcmV0LW9mLXRoZS1lbmRwb2ludC0wMTIz';
    private const OLD_SECRET = 'whsec_b2xkLXNlY3JldC1iZWZvcmUtcm90YXRpb24=';

    private static function event(): string
    {
        return json_encode([
            'id' => 'evt_01jc6v8x2a9m3yq0d7b4e5f6g8',
            'object' => 'event',
            'type' => 'payment.approved',
            'createdAt' => '2026-11-21T12:00:00.000Z',
            'livemode' => false,
            'data' => ['object' => [
                'id' => 'pay_01jc6v8x2a9m3yq0d7b4e5f6g8',
                'object' => 'payment',
                'status' => 'approved',
                'amount' => 1990,
                'currency' => 'BRL',
                'method' => 'credit_card',
                'description' => null,
                'metadata' => ['orderId' => '7'],
                'card' => ['brand' => 'visa', 'last4' => '4242'],
                'pix' => null,
                'livemode' => false,
                'createdAt' => '2026-11-21T11:59:59.000Z',
            ]],
        ], JSON_THROW_ON_ERROR);
    }

    /**
     * @param array<string, string> $headers
     * @return array<string, string>
     */
    private static function without(array $headers, string $name): array
    {
        unset($headers[$name]);
        return $headers;
    }

    public function testSignsLikeTheStandardWebhooksTestVector(): void
    {
        $headers = Webhook::sign('{"test": 2432232314}', self::VECTOR_SECRET, self::VECTOR_ID, self::VECTOR_TIMESTAMP);
        self::assertSame(self::VECTOR_SIGNATURE, $headers['webhook-signature']);
        self::assertSame((string) self::VECTOR_TIMESTAMP, $headers['webhook-timestamp']);
    }

    public function testVerifiesAndReturnsATypedEvent(): void
    {
        $payload = self::event();
        $event = Webhook::verify($payload, Webhook::sign($payload, self::SECRET), self::SECRET);

        self::assertInstanceOf(Event::class, $event);
        self::assertSame('evt_01jc6v8x2a9m3yq0d7b4e5f6g8', $event->id);
        self::assertSame('payment.approved', $event->type);
        self::assertFalse($event->livemode);
        self::assertInstanceOf(Payment::class, $event->object);
        self::assertSame('pay_01jc6v8x2a9m3yq0d7b4e5f6g8', $event->object->id);
        self::assertSame(['orderId' => '7'], $event->object->metadata);
        self::assertSame('approved', $event->data['object']['status']);
    }

    /** @return iterable<string, array{\Closure(array<string, string>): mixed}> */
    public static function headerForms(): iterable
    {
        yield 'lowercase' => [static fn (array $h) => $h];
        yield 'getallheaders() capitalization' => [static fn (array $h) => [
            'Host' => 'shop.example',
            'Content-Type' => 'application/json',
            'Webhook-Id' => $h['webhook-id'],
            'Webhook-Timestamp' => $h['webhook-timestamp'],
            'Webhook-Signature' => $h['webhook-signature'],
        ]];
        yield 'uppercase' => [static fn (array $h) => array_change_key_case($h, CASE_UPPER)];
        yield '$_SERVER' => [static fn (array $h) => [
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'application/json',
            'HTTP_WEBHOOK_ID' => $h['webhook-id'],
            'HTTP_WEBHOOK_TIMESTAMP' => $h['webhook-timestamp'],
            'HTTP_WEBHOOK_SIGNATURE' => $h['webhook-signature'],
        ]];
        yield 'PSR-7 getHeaders()' => [static fn (array $h) => [
            'Webhook-Id' => [$h['webhook-id']],
            'Webhook-Timestamp' => [$h['webhook-timestamp']],
            'Webhook-Signature' => [$h['webhook-signature']],
        ]];
        yield 'Symfony/Laravel HeaderBag (iterable)' => [static fn (array $h) => new \ArrayIterator([
            'webhook-id' => [$h['webhook-id']],
            'webhook-timestamp' => [$h['webhook-timestamp']],
            'webhook-signature' => [$h['webhook-signature']],
        ])];
        yield 'a PSR-7 message' => [static fn (array $h) => new class ($h) {
            /** @param array<string, string> $h */
            public function __construct(private array $h)
            {
            }

            /** @return array<string, list<string>> */
            public function getHeaders(): array
            {
                return array_map(static fn (string $v) => [$v], array_change_key_case($this->h, CASE_UPPER));
            }
        }];
        yield 'timestamp as an integer' => [
            static fn (array $h) => ['webhook-timestamp' => (int) $h['webhook-timestamp']] + $h,
        ];
        yield 'signatures as repeated headers' => [static fn (array $h) => [
            'Webhook-Id' => [$h['webhook-id']],
            'Webhook-Timestamp' => [$h['webhook-timestamp']],
            'Webhook-Signature' => ['v1,bm90IHRoaXMgb25l', $h['webhook-signature']],
        ]];
        // A proxy, PSR-7's getHeaderLine() or PHP-FPM's $_SERVER merge repeated headers into one,
        // joined with ", ": every signature but the last then ends with a comma.
        yield 'repeated signatures merged with ", " (ours first)' => [static fn (array $h) => [
            'HTTP_WEBHOOK_ID' => $h['webhook-id'],
            'HTTP_WEBHOOK_TIMESTAMP' => $h['webhook-timestamp'],
            'HTTP_WEBHOOK_SIGNATURE' => $h['webhook-signature'] . ', v1,bm90IHRoaXMgb25l',
        ]];
        yield 'repeated signatures merged with "," (ours first)' => [
            static fn (array $h) => ['webhook-signature' => $h['webhook-signature'] . ',v1,bm90IHRoaXMgb25l'] + $h,
        ];
    }

    /**
     * @dataProvider headerForms
     * @param \Closure(array<string, string>): mixed $form
     */
    public function testAcceptsHeadersInAnyForm(\Closure $form): void
    {
        $payload = self::event();
        $event = Webhook::verify($payload, $form(Webhook::sign($payload, self::SECRET)), self::SECRET);
        self::assertSame('payment.approved', $event->type);
    }

    public function testAcceptsAnyOfSeveralSignaturesAndSecrets(): void
    {
        $payload = self::event();
        // As during a rotation: signed with the new and the old secret.
        $headers = Webhook::sign($payload, [self::SECRET, self::OLD_SECRET]);
        self::assertCount(2, explode(' ', $headers['webhook-signature']));

        self::assertSame('payment.approved', Webhook::verify($payload, $headers, self::SECRET)->type);
        self::assertSame('payment.approved', Webhook::verify($payload, $headers, self::OLD_SECRET)->type);

        // A receiver that knows both secrets accepts a delivery signed with either.
        $oldOnly = Webhook::sign($payload, self::OLD_SECRET);
        $both = [self::SECRET, self::OLD_SECRET];
        self::assertSame('payment.approved', Webhook::verify($payload, $oldOnly, $both)->type);

        // Both signatures of a rotation, merged by a proxy into "v1,<new>, v1,<old>".
        $merged = ['webhook-signature' => str_replace(' ', ', ', $headers['webhook-signature'])] + $headers;
        self::assertSame('payment.approved', Webhook::verify($payload, $merged, self::SECRET)->type);
        self::assertSame('payment.approved', Webhook::verify($payload, $merged, self::OLD_SECRET)->type);

        // Other versions (v1a, ...) and entries without a comma are skipped, not read past.
        $mixed = ['webhook-signature' => 'v1a,abc v2 garbage , ' . $headers['webhook-signature']] + $headers;
        self::assertSame('payment.approved', Webhook::verify($payload, $mixed, self::SECRET)->type);
    }

    /** @return iterable<string, array{\Closure(string, array<string, string>): mixed, class-string<WebhookVerificationException>, string}> */
    public static function failures(): iterable
    {
        $secret = self::SECRET;
        yield 'a decoded array instead of the raw body' => [
            static fn (string $p, array $h) => Webhook::verify(json_decode($p, true), $h, $secret),
            RawBodyRequiredException::class,
            'raw request body',
        ];
        yield 'a decoded object' => [
            static fn (string $p, array $h) => Webhook::verify(json_decode($p), $h, $secret),
            RawBodyRequiredException::class,
            'stdClass',
        ];
        yield 'an empty body (php://input already read)' => [
            static fn (string $p, array $h) => Webhook::verify('', $h, $secret),
            RawBodyRequiredException::class,
            'php://input',
        ];
        yield 'a secret without whsec_' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, substr($secret, 6)),
            InvalidSecretException::class,
            'whsec_',
        ];
        yield 'a secret that is not base64' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, 'whsec_not base64!'),
            InvalidSecretException::class,
            'base64',
        ];
        yield 'an empty secret' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, 'whsec_'),
            InvalidSecretException::class,
            'base64',
        ];
        yield 'no secret at all' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, []),
            InvalidSecretException::class,
            'No webhook secret',
        ];
        yield 'getenv() of an unset variable' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, getenv('PAGAMENTOS_NO_SUCH_VARIABLE')),
            InvalidSecretException::class,
            'whsec_',
        ];
        yield 'a bad second secret' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, [$secret, 'sk_test_oops']),
            InvalidSecretException::class,
            'secret #2',
        ];
        yield 'no webhook-id' => [
            static fn (string $p, array $h) => Webhook::verify($p, self::without($h, 'webhook-id'), $secret),
            MissingHeaderException::class,
            'webhook-id',
        ];
        yield 'no webhook-timestamp' => [
            static fn (string $p, array $h) => Webhook::verify($p, self::without($h, 'webhook-timestamp'), $secret),
            MissingHeaderException::class,
            'webhook-timestamp',
        ];
        yield 'an empty webhook-signature' => [
            static fn (string $p, array $h) => Webhook::verify($p, ['webhook-signature' => ' '] + $h, $secret),
            MissingHeaderException::class,
            'webhook-signature',
        ];
        yield 'headers not an array' => [
            static fn (string $p, array $h) => Webhook::verify($p, 'webhook-id: x', $secret),
            InvalidHeaderException::class,
            'string',
        ];
        yield 'a timestamp that is not unix seconds' => [
            static fn (string $p, array $h) => Webhook::verify($p, ['webhook-timestamp' => '2026-11-21'] + $h, $secret),
            InvalidHeaderException::class,
            'unix seconds',
        ];
        yield 'a malformed signature (no comma)' => [
            static fn (string $p, array $h) => Webhook::verify($p, ['webhook-signature' => 'v1'] + $h, $secret),
            InvalidHeaderException::class,
            'v1,<base64>',
        ];
        yield 'only other signature versions' => [
            static fn (string $p, array $h) => Webhook::verify($p, ['webhook-signature' => 'v1a,abc='] + $h, $secret),
            InvalidHeaderException::class,
            'v1,<base64>',
        ];
        yield 'two different ids' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h + ['HTTP_WEBHOOK_ID' => 'evt_other'], $secret),
            InvalidHeaderException::class,
            'several different webhook-id',
        ];
        yield 'a tampered body' => [
            static fn (string $p, array $h) => Webhook::verify(str_replace('1990', '9990', $p), $h, $secret),
            SignatureMismatchException::class,
            'raw body',
        ];
        yield 'a re-encoded body' => [
            static fn (string $p, array $h) => Webhook::verify((string) json_encode(json_decode($p), 128), $h, $secret),
            SignatureMismatchException::class,
            'raw body',
        ];
        yield 'a changed id' => [
            static fn (string $p, array $h) => Webhook::verify($p, ['webhook-id' => 'evt_replayed'] + $h, $secret),
            SignatureMismatchException::class,
            'the secret',
        ];
        yield 'a changed timestamp' => [
            static fn (string $p, array $h) => Webhook::verify(
                $p,
                ['webhook-timestamp' => (string) ((int) $h['webhook-timestamp'] + 1)] + $h,
                $secret,
            ),
            SignatureMismatchException::class,
            'the secret',
        ];
        yield 'another secret' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, self::OLD_SECRET),
            SignatureMismatchException::class,
            'the secret',
        ];
        yield 'none of several secrets' => [
            static fn (string $p, array $h) => Webhook::verify($p, $h, [self::OLD_SECRET, self::VECTOR_SECRET]),
            SignatureMismatchException::class,
            'any of the secrets',
        ];
        yield 'signed, but not JSON' => [
            static fn () => Webhook::verify('not json', Webhook::sign('not json', $secret), $secret),
            InvalidPayloadException::class,
            'not JSON',
        ];
        yield 'signed, but not an event' => [
            static fn () => Webhook::verify('{"hello":1}', Webhook::sign('{"hello":1}', $secret), $secret),
            InvalidPayloadException::class,
            'not an event',
        ];
    }

    /**
     * @dataProvider failures
     * @param \Closure(string, array<string, string>): mixed $verify
     * @param class-string<WebhookVerificationException> $class
     */
    public function testEachFailureHasItsOwnExplicitError(\Closure $verify, string $class, string $says): void
    {
        $payload = self::event();
        try {
            $verify($payload, Webhook::sign($payload, self::SECRET, 'evt_01jc6v8x2a9m3yq0d7b4e5f6g8'));
            self::fail('Verified.');
        } catch (WebhookVerificationException $e) {
            self::assertSame($class, get_class($e), $e->getMessage());
            self::assertStringContainsString($says, $e->getMessage());
            self::assertStringNotContainsString(substr(self::SECRET, 6), $e->getMessage(), 'never the secret');
        }
    }

    public function testStaleAndFutureTimestampsWithAToleranceThatCanChange(): void
    {
        $payload = self::event();
        $signedAt = 1_800_000_000;
        $secret = self::SECRET;
        $headers = Webhook::sign($payload, self::SECRET, null, $signedAt);

        self::assertSame('payment.approved', Webhook::verify($payload, $headers, $secret, 300, $signedAt + 300)->type);
        self::assertSame('payment.approved', Webhook::verify($payload, $headers, $secret, 300, $signedAt - 300)->type);
        try {
            Webhook::verify($payload, $headers, self::SECRET, 300, $signedAt + 301);
            self::fail('A stale delivery verified.');
        } catch (StaleTimestampException $e) {
            self::assertSame($signedAt, $e->timestamp);
            self::assertStringContainsString('301 s old', $e->getMessage());
        }
        try {
            Webhook::verify($payload, $headers, self::SECRET, 300, $signedAt - 301);
            self::fail('A delivery from the future verified.');
        } catch (StaleTimestampException $e) {
            self::assertStringContainsString('in the future', $e->getMessage());
        }
        // A wider tolerance, and a narrower one.
        $wide = Webhook::verify($payload, $headers, $secret, 3600, $signedAt + 3000);
        self::assertSame('payment.approved', $wide->type);
        $this->expectException(StaleTimestampException::class);
        Webhook::verify($payload, $headers, self::SECRET, 10, $signedAt + 11);
    }

    public function testAForgedStaleDeliveryIsAMismatchNotStale(): void
    {
        $payload = self::event();
        $headers = Webhook::sign($payload, self::OLD_SECRET, null, 1_000_000_000);
        $this->expectException(SignatureMismatchException::class);
        Webhook::verify($payload, $headers, self::SECRET);
    }

    public function testTheDefaultToleranceIsFiveMinutesOfTheClock(): void
    {
        $payload = self::event();
        $this->expectException(StaleTimestampException::class);
        Webhook::verify($payload, Webhook::sign($payload, self::SECRET, null, time() - 3600), self::SECRET);
    }

    public function testANegativeToleranceIsAMistake(): void
    {
        $payload = self::event();
        $this->expectException(InvalidArgumentException::class);
        Webhook::verify($payload, Webhook::sign($payload, self::SECRET), self::SECRET, -1);
    }

    public function testAnEventOfAKindThisSdkDoesNotModelStillVerifies(): void
    {
        $payload = json_encode([
            'id' => 'evt_1',
            'type' => 'settlement.paid',
            'createdAt' => '2026-11-21T12:00:00.000Z',
            'livemode' => false,
            'data' => ['object' => ['id' => 'stl_1', 'object' => 'settlement', 'amount' => 10]],
        ], JSON_THROW_ON_ERROR);
        $event = Webhook::verify($payload, Webhook::sign($payload, self::SECRET), self::SECRET);
        self::assertNull($event->object);
        self::assertSame('stl_1', $event->data['object']['id']);

        // Nor does a known kind in a shape this SDK reads differently refuse an authentic event.
        $odd = json_encode([
            'id' => 'evt_2', 'type' => 'payment.approved', 'livemode' => false,
            'data' => ['object' => ['id' => 'pay_1', 'object' => 'payment', 'amount' => '10']],
        ], JSON_THROW_ON_ERROR);
        $event = Webhook::verify($odd, Webhook::sign($odd, self::SECRET), self::SECRET);
        self::assertNull($event->object);
        self::assertSame('pay_1', $event->data['object']['id']);
    }
}
