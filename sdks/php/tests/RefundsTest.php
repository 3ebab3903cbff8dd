<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\InvalidStateException;
use Pagamentos\Exception\UnprocessableException;
use Pagamentos\Resource\Payment;
use Pagamentos\Resource\Refund;

final class RefundsTest extends TestCase
{
    public function testRefundsPartlyThenTheRestAndListsTheRefunds(): void
    {
        $client = self::client();
        $payment = self::approvedCardPayment($client, 3000);

        $partial = $client->refunds->create([
            'paymentId' => $payment->id,
            'amount' => 1000,
            'reason' => 'requested_by_customer',
        ]);
        self::assertInstanceOf(Refund::class, $partial);
        self::assertMatchesRegularExpression('/^ref_\w+$/', $partial->id);
        self::assertSame($payment->id, $partial->paymentId);
        self::assertSame(1000, $partial->amount);
        self::assertSame(1000 - $partial->feeRefunded, $partial->netAmount);
        self::assertSame('requested_by_customer', $partial->reason);
        self::assertSame(Refund::KIND_REQUESTED, $partial->kind);
        self::assertNull($partial->pixReturn, 'a sandbox refund is no devolução at a PSP');
        self::assertContains($partial->status, [Refund::STATUS_PENDING, Refund::STATUS_SUCCEEDED]);

        self::assertSame($partial->id, $client->refunds->retrieve($partial->id)->id);

        $rest = $client->refunds->create(['paymentId' => $payment->id]);
        self::assertSame(2000, $rest->amount);

        $listed = array_map(
            static fn (Refund $r) => $r->id,
            iterator_to_array($client->refunds->list(['paymentId' => $payment->id, 'limit' => 1])->autoPaging()),
        );
        self::assertSame([$rest->id, $partial->id], $listed);

        $refunded = $client->payments->retrieve($payment->id);
        self::assertSame(Payment::STATUS_REFUNDED, $refunded->status);
        self::assertSame(3000, $refunded->amountRefunded);
    }

    public function testARefundAboveTheRefundableAmountIsUnprocessable(): void
    {
        $client = self::client();
        $payment = self::approvedCardPayment($client, 1000);
        try {
            $client->refunds->create(['paymentId' => $payment->id, 'amount' => 1001]);
            self::fail('A refund above the amount was accepted.');
        } catch (UnprocessableException $e) {
            self::assertSame(422, $e->status);
            self::assertSame('UNPROCESSABLE', $e->errorCode);
            self::assertMatchesRegularExpression('/^req_\w+$/', (string) $e->correlationId);
        }
    }

    public function testRefundingAPendingPaymentIsAnInvalidState(): void
    {
        $client = self::client();
        $pending = $client->payments->create(['amountInCents' => 1000, 'method' => 'pix']);
        $this->expectException(InvalidStateException::class);
        $client->refunds->create(['paymentId' => $pending->id]);
    }
}
