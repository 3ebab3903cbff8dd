<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Exception\InvalidStateException;
use Pagamentos\Resource\Capture;
use Pagamentos\Resource\NextAction;
use Pagamentos\Resource\Payment;

/**
 * 3-D Secure on the merchant's own pages and manual capture, as the PHP SDK reads them, against
 * the running server (sandbox keys: plain http to localhost is a valid returnUrl there).
 */
final class NextActionTest extends TestCase
{
    public function testReadsReturnUrlAndTheReturnedPaymentAndRefusesCaptureOfAnApprovedOne(): void
    {
        $client = self::client();
        $created = $client->payments->create([
            'amountInCents' => 3100,
            'method' => 'credit_card',
            'cardToken' => 'tok_visa',
            'returnUrl' => 'http://localhost:8080/pedido/31/retorno',
        ]);
        self::assertSame('http://localhost:8080/pedido/31/retorno', $created->returnUrl);
        self::assertNull($created->nextAction);
        self::assertNull($created->capture, 'automatic captures (the sandbox)');

        $approved = self::eventually(static function () use ($client, $created): ?Payment {
            $payment = $client->payments->retrieve($created->id);
            return $payment->status === Payment::STATUS_APPROVED ? $payment : null;
        }, 'card approval');
        // The buyer's return URL as the server builds it: the payment is read, not the query.
        $returnedTo = $created->returnUrl . '?paymentId=' . $created->id . '&status=declined';
        $returned = $client->payments->retrieveReturned($returnedTo);
        self::assertSame($approved->id, $returned->id);
        self::assertSame(Payment::STATUS_APPROVED, $returned->status);

        try {
            $client->payments->capture($approved->id);
            self::fail('an approved payment cannot be captured');
        } catch (InvalidStateException $e) {
            self::assertSame(409, $e->status);
        }
        $this->expectException(InvalidArgumentException::class);
        $client->payments->retrieveReturned('https://loja.example/retorno?status=approved');
    }

    public function testAPaymentWithANextActionAndAManualCaptureIsReadWithTheirFields(): void
    {
        // A requires_action payment as the server answers one (a live card at an acquirer, which
        // the sandbox never makes): the sandbox payment's own answer with the live fields set.
        $client = self::client();
        $data = $client->payments
            ->create(['amountInCents' => 900, 'method' => 'credit_card', 'cardToken' => 'tok_visa'])
            ->toArray();
        $data['status'] = Payment::STATUS_REQUIRES_ACTION;
        $data['returnUrl'] = 'https://loja.example/retorno';
        $data['nextAction'] = [
            'type' => 'redirect',
            'url' => 'https://bank.example/3ds/abc',
            'method' => 'GET',
            'expiresAt' => '2026-11-28T18:15:00.000Z',
            'returnUrl' => 'https://loja.example/retorno',
        ];
        $data['capture'] = ['method' => 'manual', 'status' => Capture::STATUS_PENDING];
        $payment = new Payment($data);
        self::assertInstanceOf(NextAction::class, $payment->nextAction);
        self::assertSame(NextAction::TYPE_REDIRECT, $payment->nextAction->type);
        self::assertSame('https://bank.example/3ds/abc', $payment->nextAction->url);
        self::assertSame('GET', $payment->nextAction->method);
        self::assertSame('2026-11-28T18:15:00+00:00', $payment->nextAction->expiresAt->format(DATE_ATOM));
        self::assertSame('https://loja.example/retorno', $payment->nextAction->returnUrl);
        self::assertSame(Capture::STATUS_PENDING, $payment->capture?->status);
        self::assertSame('manual', $payment->capture->method);
    }
}
