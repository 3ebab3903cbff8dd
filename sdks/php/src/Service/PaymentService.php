<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Page;
use Pagamentos\Resource\Payment;

/**
 * Payments: `$client->payments`. The reference pattern every resource service follows.
 */
final class PaymentService extends AbstractService
{
    /**
     * Creates a payment. It answers `pending`; card payments are approved or declined a moment
     * later, Pix ones when paid (or they expire).
     *
     * @param array<string, mixed> $params `amountInCents`, `method` (`credit_card` | `pix`), `cardToken`
     *        (card), and optionally `description`, `metadata`, `customer`, `installments`,
     *        `pixExpiresInSeconds`
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options without
     *        an idempotencyKey a random one is sent (and reused by every retry of this call)
     */
    public function create(array $params, array $options = []): Payment
    {
        return $this->requestObject(Payment::class, 'POST', '/v1/payments', $params, $options);
    }

    /** @param array{timeout?: int|float, maxRetries?: int} $options */
    public function retrieve(string $id, array $options = []): Payment
    {
        return $this->requestObject(Payment::class, 'GET', self::path('/v1/payments/%s', $id), null, $options);
    }

    /**
     * One page of payments, newest first.
     *
     * @param array<string, mixed> $params `limit` (1-100), `startingAfter`, `endingBefore`,
     *        `status`, `method`, `createdGte`, `createdLte`
     * @param array{timeout?: int|float, maxRetries?: int} $options
     * @return Page<Payment>
     */
    public function list(array $params = [], array $options = []): Page
    {
        return $this->requestPage(Payment::class, '/v1/payments', $params, $options);
    }

    /**
     * Cancels a pending payment (InvalidStateException otherwise).
     *
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options
     */
    public function cancel(string $id, array $options = []): Payment
    {
        return $this->requestObject(Payment::class, 'POST', self::path('/v1/payments/%s/cancel', $id), null, $options);
    }
}
