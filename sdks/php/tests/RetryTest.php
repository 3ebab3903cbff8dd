<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Client;
use Pagamentos\Exception\ApiException;
use Pagamentos\Exception\ConnectionException;
use Pagamentos\Exception\IdempotencyException;
use Pagamentos\Exception\InvalidRequestException;
use Pagamentos\Exception\RateLimitException;
use Pagamentos\Exception\ServerException;
use Pagamentos\Exception\TimeoutException;
use Pagamentos\Resource\Payment;
use Pagamentos\Tests\Support\FaultProxy;
use Pagamentos\Tests\Support\HeldRequest;
use Pagamentos\Tests\Support\TestServer;

/**
 * Retries through fault-proxy.php, between the SDK and the real server: the network and the
 * gateways misbehave there, the server itself stays real.
 */
final class RetryTest extends TestCase
{
    private static FaultProxy $proxy;
    private static string $secretKey;
    private static Client $direct;
    private static Client $client;

    public static function setUpBeforeClass(): void
    {
        $server = TestServer::main();
        $key = self::$secretKey = $server->newAccount()['secretKey'];
        self::$proxy = FaultProxy::start($server->baseUrl);
        self::$direct = $server->client([], $key);
        self::$client = $server->client(['baseUrl' => self::$proxy->baseUrl], $key);
    }

    /** @return list<string> ids of the account's payments tagged so */
    private static function paymentsTagged(string $tag): array
    {
        $ids = [];
        foreach (self::$direct->payments->list(['limit' => 100])->autoPaging() as $payment) {
            if (($payment->metadata['tag'] ?? null) === $tag) {
                $ids[] = $payment->id;
            }
        }
        return $ids;
    }

    /** @return array<string, mixed> */
    private static function card(string $tag): array
    {
        return [
            'amountInCents' => 5000,
            'method' => 'credit_card',
            'cardToken' => 'tok_visa',
            'metadata' => ['tag' => $tag],
        ];
    }

    public function testAConnectionDroppedAfterTheServerAnsweredIsRetriedAndMakesOnePayment(): void
    {
        $tag = bin2hex(random_bytes(6));
        self::$proxy->script([['do' => 'forward-then-drop']]);

        $payment = self::$client->payments->create(self::card($tag));

        $requests = self::$proxy->requests();
        self::assertSame(['forward-then-drop', 'forward'], array_column($requests, 'action'));
        $key = $requests[0]['headers']['idempotency-key'];
        self::assertSame($key, $requests[1]['headers']['idempotency-key']);
        self::assertSame($requests[0]['body'], $requests[1]['body']);
        self::assertSame(2, $payment->lastResponse?->attempts);
        self::assertTrue($payment->lastResponse->idempotentReplayed, 'the retry got the stored answer');
        self::assertSame([$payment->id], self::paymentsTagged($tag));
    }

    public function testWithoutRetriesTheDropIsAConnectionErrorAndTheSameKeyRecoversThePayment(): void
    {
        $tag = bin2hex(random_bytes(6));
        self::$proxy->script([['do' => 'forward-then-drop']]);
        try {
            self::$client->payments->create(self::card($tag), ['maxRetries' => 0]);
            self::fail('A dropped connection went unnoticed.');
        } catch (ConnectionException $e) {
            self::assertNotInstanceOf(TimeoutException::class, $e);
            self::assertSame(1, $e->attempts);
            self::assertNotNull($e->idempotencyKey);
            self::assertStringContainsString($e->idempotencyKey, $e->getMessage());
            $key = $e->idempotencyKey;
        }
        self::assertCount(1, self::paymentsTagged($tag), 'the server had made the payment');

        $recovered = self::$client->payments->create(self::card($tag), ['idempotencyKey' => $key]);
        self::assertTrue($recovered->lastResponse?->idempotentReplayed);
        self::assertSame([$recovered->id], self::paymentsTagged($tag));
    }

    public function testATimeoutIsRetriedWithTheSameKey(): void
    {
        $tag = bin2hex(random_bytes(6));
        self::$proxy->script([['do' => 'forward-then-hang']]);

        $payment = self::$client->payments->create(self::card($tag), ['timeout' => 5]);

        $requests = self::$proxy->requests();
        self::assertSame(['forward-then-hang', 'forward'], array_column($requests, 'action'));
        self::assertSame($requests[0]['headers']['idempotency-key'], $requests[1]['headers']['idempotency-key']);
        self::assertSame([$payment->id], self::paymentsTagged($tag));
    }

    public function testATimeoutOnEveryAttemptIsATimeoutException(): void
    {
        self::$proxy->script([['do' => 'forward-then-hang'], ['do' => 'forward-then-hang']]);
        try {
            self::$client->payments->list([], ['timeout' => 1, 'maxRetries' => 1]);
            self::fail('No timeout.');
        } catch (TimeoutException $e) {
            self::assertSame(2, $e->attempts);
            self::assertNull($e->idempotencyKey, 'a GET carries no key');
        }
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function retriedAnswers(): iterable
    {
        yield '409 key in use' => [FaultProxy::apiError(409, 'IDEMPOTENCY_KEY_IN_USE')];
        yield '429' => [FaultProxy::apiError(429, 'RATE_LIMITED')];
        yield '500' => [FaultProxy::apiError(500, 'INTERNAL_ERROR')];
        yield '502 from a gateway' => [['do' => 'respond', 'status' => 502, 'body' => '<html>Bad Gateway</html>']];
        yield '503' => [FaultProxy::apiError(503, 'SERVICE_UNAVAILABLE')];
        yield '504 from a gateway' => [['do' => 'respond', 'status' => 504, 'body' => '']];
        yield 'connection dropped before the server' => [['do' => 'drop']];
    }

    /**
     * @dataProvider retriedAnswers
     * @param array<string, mixed> $failure
     */
    public function testRetriesWhatAnotherAttemptCanFixWithTheSameKey(array $failure): void
    {
        $tag = bin2hex(random_bytes(6));
        self::$proxy->script([$failure, $failure]);

        $payment = self::$client->payments->create(self::card($tag));

        $requests = self::$proxy->requests();
        self::assertCount(3, $requests);
        self::assertSame('forward', $requests[2]['action']);
        $keys = array_map(static fn (array $r) => $r['headers']['idempotency-key'], $requests);
        self::assertCount(1, array_unique($keys));
        self::assertSame(3, $payment->lastResponse?->attempts);
        self::assertSame([$payment->id], self::paymentsTagged($tag));
    }

    /** @return iterable<string, array{int, string, string}> */
    public static function answersWithRetryAfter(): iterable
    {
        yield '429' => [429, 'RATE_LIMITED', '1'];
        yield '503' => [503, 'PROVIDER_UNAVAILABLE', '2'];
    }

    /** @dataProvider answersWithRetryAfter */
    public function testRetryAfterIsWaitedOutThenRetried(int $status, string $code, string $retryAfter): void
    {
        self::$proxy->script([FaultProxy::apiError($status, $code, ['Retry-After' => $retryAfter])]);
        $started = microtime(true);

        $page = self::$client->payments->list(['limit' => 1]);

        // A lower bound the SDK's own wait guarantees, not a timing of the machine.
        self::assertGreaterThanOrEqual((float) $retryAfter, microtime(true) - $started);
        self::assertSame(2, $page->lastResponse?->attempts);
        self::assertSame(['respond', 'forward'], array_column(self::$proxy->requests(), 'action'));
    }

    public function testTheRealServersKeyInUseIsRetriedWithTheKeyThatThenMakesOnePayment(): void
    {
        $tag = bin2hex(random_bytes(6));
        $key = 'held-' . $tag;
        $params = self::card($tag);
        // The server runs this request but cannot write its answer until release(): its key
        // stays in use meanwhile (see HeldRequest).
        $held = HeldRequest::send(TestServer::main()->baseUrl, self::$secretKey, 'POST', '/v1/payments', $params, $key);
        // Once its payment is listed, it has run (a GET does not touch the key).
        $id = self::eventually(static fn (): ?string => self::paymentsTagged($tag)[0] ?? null, 'the held payment');

        self::$proxy->script([]);
        try {
            self::$client->payments->create($params, ['idempotencyKey' => $key, 'maxRetries' => 1]);
            self::fail('A key in use went unnoticed.');
        } catch (IdempotencyException $e) {
            self::assertSame(409, $e->status);
            self::assertSame('IDEMPOTENCY_KEY_IN_USE', $e->errorCode);
            self::assertSame(1.0, $e->retryAfter);
            self::assertSame($key, $e->idempotencyKey);
            self::assertSame(2, $e->response->attempts, 'retried');
        }
        $requests = self::$proxy->requests();
        self::assertSame(['forward', 'forward'], array_column($requests, 'action'), 'both answered by the server');
        self::assertSame([$key, $key], array_map(static fn (array $r) => $r['headers']['idempotency-key'], $requests));

        [$status, $body] = $held->release();
        self::assertSame(200, $status, $body);
        self::assertSame($id, json_decode($body, true)['id']);
        $replayed = self::$client->payments->create($params, ['idempotencyKey' => $key]);
        self::assertSame($id, $replayed->id);
        self::assertTrue($replayed->lastResponse?->idempotentReplayed);
        self::assertSame(1, $replayed->lastResponse->attempts);
        self::assertSame([$id], self::paymentsTagged($tag));
    }

    public function testARetryAfterAboveSixtySecondsIsNotWaitedButReported(): void
    {
        self::$proxy->script([FaultProxy::apiError(429, 'RATE_LIMITED', ['Retry-After' => '120'])]);
        try {
            self::$client->payments->list();
            self::fail('No error.');
        } catch (RateLimitException $e) {
            self::assertSame(120.0, $e->retryAfter);
            self::assertSame(1, $e->response->attempts);
            self::assertCount(1, self::$proxy->requests());
        }
    }

    public function testGivesUpAfterMaxRetriesWithTheLastAnswer(): void
    {
        $error = FaultProxy::apiError(500, 'INTERNAL_ERROR');
        self::$proxy->script([$error, $error, $error, $error]);
        try {
            self::$client->payments->create(self::card('gives-up'), ['maxRetries' => 2]);
            self::fail('No error.');
        } catch (ServerException $e) {
            self::assertSame(500, $e->status);
            self::assertSame('INTERNAL_ERROR', $e->errorCode);
            self::assertSame('req_proxy', $e->correlationId);
            self::assertSame(3, $e->response->attempts);
            self::assertCount(3, self::$proxy->requests());
        }
    }

    /** @return iterable<string, array{array<string, mixed>, class-string<ApiException>}> */
    public static function finalAnswers(): iterable
    {
        yield '501' => [FaultProxy::apiError(501, 'INTERNAL_ERROR'), ServerException::class];
        yield '409 invalid state' => [FaultProxy::apiError(409, 'INVALID_STATE'), ApiException::class];
        yield '422 key reused' => [FaultProxy::apiError(422, 'IDEMPOTENCY_KEY_REUSED'), IdempotencyException::class];
        yield '400' => [FaultProxy::apiError(400, 'VALIDATION_ERROR'), InvalidRequestException::class];
    }

    /**
     * @dataProvider finalAnswers
     * @param array<string, mixed> $answer
     * @param class-string<ApiException> $class
     */
    public function testNeverRetriesOther4xxNor501(array $answer, string $class): void
    {
        self::$proxy->script([$answer]);
        try {
            self::$client->payments->create(self::card('not-retried'));
            self::fail('No error.');
        } catch (ApiException $e) {
            self::assertInstanceOf($class, $e);
            self::assertCount(1, self::$proxy->requests());
        }
    }

    public function testARealValidationErrorIsSentOnce(): void
    {
        self::$proxy->script([]);
        try {
            self::$client->payments->create(['amountInCents' => 0, 'method' => 'pix']);
            self::fail('No error.');
        } catch (InvalidRequestException $e) {
            self::assertSame('amountInCents', $e->param);
            self::assertCount(1, self::$proxy->requests());
        }
    }

    public function testAnAnswerThatIsNotJsonIsUnexpected(): void
    {
        self::$proxy->script([['do' => 'respond', 'status' => 200, 'body' => '<html>captive portal</html>']]);
        $this->expectException(\Pagamentos\Exception\UnexpectedResponseException::class);
        self::$client->payments->retrieve('pay_whatever');
    }

    public function testTheKeyIsKeptWhenTheServerRefusesAPaymentOnItsOwn(): void
    {
        // Not every failure is a fault: a declined card is an answer, not retried.
        $payment = self::$client->payments->create([
            'amountInCents' => 100,
            'method' => 'credit_card',
            'cardToken' => 'tok_declined',
        ]);
        $declined = self::eventually(static function () use ($payment): ?Payment {
            $fetched = self::$direct->payments->retrieve($payment->id);
            return $fetched->status === Payment::STATUS_DECLINED ? $fetched : null;
        }, 'decline');
        self::assertNotNull($declined->failure);
        self::assertNotSame('', $declined->failure->code);
    }
}
