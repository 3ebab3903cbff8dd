<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Exception\InvalidArgumentException;
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

    /**
     * Captures a `requires_capture` payment (an acquirer account with manual capture), for its
     * whole amount. The answer's capture is `processing`; the payment becomes `approved` when
     * the acquirer confirms, or `failed` (`capture_failed`). 409 INVALID_STATE otherwise.
     *
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options
     */
    public function capture(string $id, array $options = []): Payment
    {
        return $this->requestObject(Payment::class, 'POST', self::path('/v1/payments/%s/capture', $id), null, $options);
    }

    /**
     * The payment a buyer came back with after 3-D Secure, from the URL of your returnUrl page
     * as it was requested (`paymentId` was added to its query). The query's `status` is only a
     * hint anyone could forge: this reads the payment itself.
     *
     * @param array{timeout?: int|float, maxRetries?: int} $options
     */
    public function retrieveReturned(string $url, array $options = []): Payment
    {
        parse_str((string) parse_url($url, PHP_URL_QUERY), $query);
        $id = $query['paymentId'] ?? null;
        if (!is_string($id) || preg_match('/^pay_[A-Za-z0-9]+$/', $id) !== 1) {
            throw new InvalidArgumentException('The return URL carries no paymentId.');
        }
        return $this->retrieve($id, $options);
    }
}
