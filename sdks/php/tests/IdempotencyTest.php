<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\IdempotencyException;
use Pagamentos\Tests\Support\FaultProxy;
use Pagamentos\Tests\Support\TestServer;

final class IdempotencyTest extends TestCase
{
    public function testTheSameKeyReplaysTheSamePayment(): void
    {
        $client = self::client();
        $key = 'order-' . bin2hex(random_bytes(8));
        $params = ['amountInCents' => 4200, 'method' => 'credit_card', 'cardToken' => 'tok_mastercard'];

        $first = $client->payments->create($params, ['idempotencyKey' => $key]);
        $again = $client->payments->create($params, ['idempotencyKey' => $key]);

        self::assertSame($first->id, $again->id);
        self::assertSame($key, $first->lastResponse?->idempotencyKey);
        self::assertFalse($first->lastResponse->idempotentReplayed);
        self::assertTrue($again->lastResponse?->idempotentReplayed);
        self::assertSame($first->lastResponse->body, $again->lastResponse->body);
    }

    public function testTheSameKeyForAnotherRequestIsRefused(): void
    {
        $client = self::client();
        $key = 'order-' . bin2hex(random_bytes(8));
        $client->payments->create(['amountInCents' => 1000, 'method' => 'pix'], ['idempotencyKey' => $key]);
        try {
            $client->payments->create(['amountInCents' => 1001, 'method' => 'pix'], ['idempotencyKey' => $key]);
            self::fail('A reused key was accepted.');
        } catch (IdempotencyException $e) {
            self::assertSame(422, $e->status);
            self::assertSame('IDEMPOTENCY_KEY_REUSED', $e->errorCode);
            self::assertSame($key, $e->idempotencyKey);
            self::assertSame(1, $e->response->attempts);
        }
    }

    public function testEveryPostCarriesAKeyOfItsOwnAndGetsCarryNone(): void
    {
        $proxy = FaultProxy::start(TestServer::main()->baseUrl);
        $client = self::client(['baseUrl' => $proxy->baseUrl]);
        $proxy->script([]);

        $a = $client->payments->create(['amountInCents' => 1000, 'method' => 'pix']);
        $b = $client->payments->create(['amountInCents' => 1000, 'method' => 'pix']);
        $client->payments->cancel($a->id);
        $client->payments->retrieve($b->id);
        $client->payments->list(['limit' => 1]);

        $requests = $proxy->requests();
        self::assertSame(['POST', 'POST', 'POST', 'GET', 'GET'], array_column($requests, 'method'));
        $keys = array_map(static fn (array $r): ?string => $r['headers']['idempotency-key'] ?? null, $requests);
        self::assertNotNull($keys[0]);
        self::assertNotNull($keys[1]);
        self::assertNotNull($keys[2]);
        self::assertCount(3, array_unique(array_slice($keys, 0, 3)));
        self::assertSame([null, null], array_slice($keys, 3));

        // The cancel went without a body and without a Content-Type (not curl's form type).
        self::assertSame('', $requests[2]['body']);
        self::assertArrayNotHasKey('content-type', $requests[2]['headers']);
        self::assertSame('application/json', $requests[0]['headers']['content-type']);
        self::assertSame(['amountInCents' => 1000, 'method' => 'pix'], json_decode($requests[0]['body'], true));
    }
}
