<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Client;
use Pagamentos\Resource\Payment;
use Pagamentos\Tests\Support\TestServer;

abstract class TestCase extends \PHPUnit\Framework\TestCase
{
    /** @param array<string, mixed> $options */
    protected static function client(array $options = [], ?string $key = null): Client
    {
        return TestServer::main()->client($options, $key);
    }

    /**
     * Polls until `$probe` returns a value other than null: for what the server does
     * asynchronously (a card confirmation, a webhook delivery). The deadline is a ceiling for a
     * busy machine, never a timing the test relies on.
     *
     * @template T
     * @param \Closure(): (T|null) $probe
     * @return T
     */
    protected static function eventually(\Closure $probe, string $what, float $deadlineSeconds = 60.0): mixed
    {
        $until = microtime(true) + $deadlineSeconds;
        while (true) {
            $value = $probe();
            if ($value !== null) {
                return $value;
            }
            if (microtime(true) > $until) {
                self::fail(sprintf('Still no %s after %d s.', $what, $deadlineSeconds));
            }
            usleep(50_000);
        }
    }

    protected static function approvedCardPayment(Client $client, int $amountInCents = 2500): Payment
    {
        $created = $client->payments->create([
            'amountInCents' => $amountInCents,
            'method' => 'credit_card',
            'cardToken' => 'tok_visa',
        ]);
        return self::eventually(static function () use ($client, $created): ?Payment {
            $payment = $client->payments->retrieve($created->id);
            return $payment->status === Payment::STATUS_APPROVED ? $payment : null;
        }, 'approval of ' . $created->id);
    }
}
