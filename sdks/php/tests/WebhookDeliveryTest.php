<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Client;
use Pagamentos\Exception\SignatureMismatchException;
use Pagamentos\Exception\StaleTimestampException;
use Pagamentos\Resource\Payment;
use Pagamentos\Tests\Support\TestServer;
use Pagamentos\Tests\Support\WebhookReceiver;
use Pagamentos\Webhook;

/**
 * Deliveries from the real server, received by PHP's built-in server and verified as a
 * merchant's code would.
 */
final class WebhookDeliveryTest extends TestCase
{
    private static Client $client;
    private static WebhookReceiver $receiver;

    public static function setUpBeforeClass(): void
    {
        $server = TestServer::main();
        self::$client = $server->client([], $server->newAccount()['secretKey']);
        self::$receiver = WebhookReceiver::start();
    }

    /**
     * @param list<string> $events
     * @return array{id: string, secret: string}
     */
    private static function endpoint(array $events = ['*']): array
    {
        $endpoint = self::$client->request('POST', '/v1/webhook-endpoints', [
            'url' => self::$receiver->url(),
            'events' => $events,
        ])->json();
        self::assertStringStartsWith('whsec_', $endpoint['secret']);
        return $endpoint;
    }

    /** @return array{method: string, uri: string, getallheaders: array<string, string>, server: array<string, string>, body: string} */
    private static function testDelivery(string $endpointId): array
    {
        $eventId = self::$client->request('POST', '/v1/webhook-endpoints/' . $endpointId . '/test')->json()['eventId'];
        return self::$receiver->waitFor(static fn (array $event): bool => $event['id'] === $eventId, 'test delivery');
    }

    public function testAPaymentEventVerifiesWithTheHeadersAsPhpHandsThemOver(): void
    {
        $endpoint = self::endpoint(['payment.created']);
        $payment = self::$client->payments->create([
            'amountInCents' => 2990,
            'method' => 'pix',
            'metadata' => ['orderId' => '77'],
        ]);

        $delivery = self::$receiver->waitFor(
            static fn (array $e): bool => $e['type'] === 'payment.created'
                && $e['data']['object']['id'] === $payment->id,
            'payment.created delivery',
        );
        self::assertSame('POST', $delivery['method']);
        self::assertSame('/hooks', $delivery['uri']);

        // getallheaders(): the names as sent, in whatever case PHP reports them.
        $event = Webhook::verify($delivery['body'], $delivery['getallheaders'], $endpoint['secret']);
        self::assertSame('payment.created', $event->type);
        self::assertInstanceOf(Payment::class, $event->object);
        self::assertSame($payment->id, $event->object->id);
        self::assertSame(['orderId' => '77'], $event->object->metadata);
        self::assertSame(2990, $event->object->amount);
        $webhookId = array_change_key_case($delivery['getallheaders'])['webhook-id'];
        self::assertSame($event->id, $webhookId, 'webhook-id is the event id: dedupe on it');

        // $_SERVER (HTTP_WEBHOOK_ID, ...), and name => [values] as PSR-7 gives them.
        self::assertSame($event->id, Webhook::verify($delivery['body'], $delivery['server'], $endpoint['secret'])->id);
        $psr7 = array_map(static fn (string $value): array => [$value], $delivery['getallheaders']);
        self::assertSame($event->id, Webhook::verify($delivery['body'], $psr7, $endpoint['secret'])->id);

        // Tampering: one byte of the body.
        try {
            $tampered = str_replace('2990', '2999', $delivery['body']);
            Webhook::verify($tampered, $delivery['getallheaders'], $endpoint['secret']);
            self::fail('A tampered body verified.');
        } catch (SignatureMismatchException) {
            self::addToAssertionCount(1);
        }

        // Staleness: the same delivery replayed later than the tolerance.
        $sentAt = (int) $delivery['server']['HTTP_WEBHOOK_TIMESTAMP'];
        try {
            Webhook::verify($delivery['body'], $delivery['server'], $endpoint['secret'], 300, $sentAt + 301);
            self::fail('A replay verified.');
        } catch (StaleTimestampException $e) {
            self::assertSame($sentAt, $e->timestamp);
        }
        Webhook::verify($delivery['body'], $delivery['server'], $endpoint['secret'], 600, $sentAt + 500);
    }

    public function testSecretRotationDeliversTwoSignaturesAndEitherSecretVerifies(): void
    {
        $endpoint = self::endpoint(['payment.approved']);
        $old = $endpoint['secret'];

        $before = self::testDelivery($endpoint['id']);
        self::assertSame('webhook.test', Webhook::verify($before['body'], $before['getallheaders'], $old)->type);

        $rotated = self::$client->request('POST', '/v1/webhook-endpoints/' . $endpoint['id'] . '/rotate-secret');
        $new = $rotated->json()['secret'];
        self::assertStringStartsWith('whsec_', $new);
        self::assertNotSame($old, $new);
        try {
            Webhook::verify($before['body'], $before['getallheaders'], $new);
            self::fail('A delivery signed before the rotation verified with the new secret alone.');
        } catch (SignatureMismatchException) {
            self::addToAssertionCount(1);
        }

        $after = self::testDelivery($endpoint['id']);
        $signatures = array_change_key_case($after['getallheaders'])['webhook-signature'];
        self::assertCount(2, explode(' ', $signatures), 'new and old signatures');
        self::assertSame('webhook.test', Webhook::verify($after['body'], $after['getallheaders'], $new)->type);
        self::assertSame('webhook.test', Webhook::verify($after['body'], $after['getallheaders'], $old)->type);
        self::assertSame('webhook.test', Webhook::verify($after['body'], $after['server'], [$new, $old])->type);

        $stranger = self::endpoint(['payment.approved'])['secret'];
        $this->expectException(SignatureMismatchException::class);
        Webhook::verify($after['body'], $after['getallheaders'], $stranger);
    }
}
