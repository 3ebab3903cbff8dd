<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Page;
use Pagamentos\Resource\Refund;

/**
 * Refunds: `$client->refunds`.
 */
final class RefundService extends AbstractService
{
    /**
     * Refunds an approved payment: everything not yet refunded, or `amount` centavos.
     *
     * @param array<string, mixed> $params `paymentId`, optionally `amount`, `reason`, `metadata`
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options
     */
    public function create(array $params, array $options = []): Refund
    {
        return $this->requestObject(Refund::class, 'POST', '/v1/refunds', $params, $options);
    }

    /** @param array{timeout?: int|float, maxRetries?: int} $options */
    public function retrieve(string $id, array $options = []): Refund
    {
        return $this->requestObject(Refund::class, 'GET', self::path('/v1/refunds/%s', $id), null, $options);
    }

    /**
     * @param array<string, mixed> $params `limit`, `startingAfter`, `endingBefore`, `paymentId`, `status`,
     *        `createdGte`, `createdLte`
     * @param array{timeout?: int|float, maxRetries?: int} $options
     * @return Page<Refund>
     */
    public function list(array $params = [], array $options = []): Page
    {
        return $this->requestPage(Refund::class, '/v1/refunds', $params, $options);
    }
}
