<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Page;
use Pagamentos\Resource\Card;
use Pagamentos\Resource\Payment;
use Pagamentos\Resource\Pix;
use Pagamentos\Tests\Support\TestServer;

final class PaymentsTest extends TestCase
{
    public function testCreatesACardPaymentWithShapeBAndReadsItBackApproved(): void
    {
        $client = self::client();
        $payment = $client->payments->create([
            'amountInCents' => 1990,
            'method' => 'credit_card',
            'cardToken' => 'tok_visa',
            'description' => 'Pedido 1234',
            'metadata' => ['orderId' => '1234'],
            'customer' => ['name' => 'Maria Silva', 'email' => 'maria@example.com'],
        ]);

        self::assertInstanceOf(Payment::class, $payment);
        self::assertMatchesRegularExpression('/^pay_\w+$/', $payment->id);
        self::assertSame(Payment::STATUS_PENDING, $payment->status);
        self::assertSame(1990, $payment->amount);
        self::assertSame('BRL', $payment->currency);
        self::assertSame(Payment::METHOD_CREDIT_CARD, $payment->method);
        self::assertSame('Pedido 1234', $payment->description);
        self::assertSame(['orderId' => '1234'], $payment->metadata);
        self::assertSame('Maria Silva', $payment->customer?->name);
        self::assertInstanceOf(Card::class, $payment->card);
        self::assertSame('visa', $payment->card->brand);
        self::assertNull($payment->pix);
        self::assertFalse($payment->livemode);
        self::assertInstanceOf(\DateTimeImmutable::class, $payment->createdAt);

        // The raw answer is there: status, headers, correlation id, the key the POST carried.
        $response = $payment->lastResponse;
        self::assertNotNull($response);
        self::assertSame(200, $response->status);
        self::assertMatchesRegularExpression('/^req_\w+$/', (string) $response->correlationId);
        self::assertSame($response->correlationId, $response->header('X-Correlation-Id'));
        self::assertStringStartsWith('application/json', (string) $response->header('content-type'));
        self::assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', (string) $response->idempotencyKey);
        self::assertFalse($response->idempotentReplayed);
        self::assertSame(1, $response->attempts);
        self::assertSame($payment->id, $response->json()['id']);
        self::assertSame('payment', $payment->toArray()['object']);

        $approved = self::eventually(static function () use ($client, $payment): ?Payment {
            $fetched = $client->payments->retrieve($payment->id);
            return $fetched->status === Payment::STATUS_APPROVED ? $fetched : null;
        }, 'card approval');
        self::assertSame($payment->id, $approved->id);
        self::assertIsInt($approved->feeAmount);
        self::assertSame(1990 - $approved->feeAmount, $approved->netAmount);
        self::assertSame(0, $approved->amountRefunded);
    }

    public function testADeclinedPaymentsFailureHasToArrayAsTheResourcesDo(): void
    {
        $client = self::client();
        $payment = $client->payments->create([
            'amountInCents' => 990,
            'method' => 'credit_card',
            'cardToken' => 'tok_declined',
        ]);
        $declined = self::eventually(static function () use ($client, $payment): ?Payment {
            $fetched = $client->payments->retrieve($payment->id);
            return $fetched->status === Payment::STATUS_DECLINED ? $fetched : null;
        }, 'card decline');
        self::assertNotNull($declined->failure);
        $failure = $declined->failure->toArray();
        self::assertSame($declined->failure->code, $failure['code']);
        self::assertSame($declined->failure->message, $failure['message']);
        self::assertSame($declined->toArray()['failure'], $failure, 'the same as the payment\'s own toArray() holds');
    }

    public function testCreatesAPixPaymentWithItsBrCode(): void
    {
        $payment = self::client()->payments->create(['amountInCents' => 1050, 'method' => 'pix']);

        self::assertSame(Payment::METHOD_PIX, $payment->method);
        self::assertInstanceOf(Pix::class, $payment->pix);
        self::assertStringStartsWith('000201', $payment->pix->copyPaste);
        self::assertStringContainsString('br.gov.bcb.pix', $payment->pix->copyPaste);
        self::assertStringContainsString('<svg', $payment->pix->qrCodeSvg);
        self::assertGreaterThan($payment->createdAt, $payment->pix->expiresAt);
        self::assertNull($payment->pix->txid, 'a sandbox Pix has no txid at a PSP');
        self::assertNull($payment->pix->endToEndId);
        self::assertNull($payment->card);
    }

    public function testCancelsAPendingPaymentWithABodylessPost(): void
    {
        $client = self::client();
        $payment = $client->payments->create(['amountInCents' => 700, 'method' => 'pix']);

        $canceled = $client->payments->cancel($payment->id);

        self::assertSame(Payment::STATUS_CANCELED, $canceled->status);
        self::assertSame($payment->id, $canceled->id);
        self::assertNotNull($canceled->lastResponse?->idempotencyKey);
        self::assertNotSame($payment->lastResponse?->idempotencyKey, $canceled->lastResponse?->idempotencyKey);
        self::assertSame(Payment::STATUS_CANCELED, $client->payments->retrieve($payment->id)->status);
    }

    public function testListsPagesAndWalksEveryPageBothWays(): void
    {
        $client = TestServer::main()->client([], TestServer::main()->newAccount()['secretKey']);
        $ids = [];
        for ($i = 0; $i < 5; $i++) {
            $ids[] = $client->payments->create(['amountInCents' => 100 + $i, 'method' => 'pix'])->id;
        }
        $newestFirst = array_reverse($ids);

        $page = $client->payments->list(['limit' => 2]);
        self::assertInstanceOf(Page::class, $page);
        self::assertCount(2, $page);
        self::assertTrue($page->hasMore);
        self::assertSame(array_slice($newestFirst, 0, 2), array_map(static fn (Payment $p) => $p->id, $page->data));
        self::assertSame(200, $page->lastResponse?->status);
        self::assertNull($page->data[0]->lastResponse);

        $second = $page->nextPage();
        self::assertNotNull($second);
        self::assertSame(array_slice($newestFirst, 2, 2), array_map(static fn (Payment $p) => $p->id, $second->data));

        $walked = array_map(static fn (Payment $p) => $p->id, iterator_to_array($page->autoPaging()));
        self::assertSame($newestFirst, $walked);

        $last = $client->payments->list(['limit' => 2, 'startingAfter' => $newestFirst[3]]);
        self::assertFalse($last->hasMore);
        self::assertNull($last->nextPage());

        // Backwards from the oldest: the newer ones, oldest first.
        $newer = $client->payments->list(['limit' => 2, 'endingBefore' => $ids[0]]);
        $walkedBack = array_map(static fn (Payment $p) => $p->id, iterator_to_array($newer->autoPaging()));
        self::assertSame(array_slice($ids, 1), $walkedBack);

        // Filters and a DateTime parameter pass through.
        $client->payments->cancel($ids[2]);
        $canceled = $client->payments->list([
            'status' => 'canceled',
            'createdGte' => new \DateTimeImmutable('-1 hour'),
        ]);
        self::assertSame([$ids[2]], array_map(static fn (Payment $p) => $p->id, $canceled->data));
    }
}
