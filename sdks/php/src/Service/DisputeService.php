<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Page;
use Pagamentos\Resource\Dispute;

/**
 * Disputes (card chargebacks and Pix MED returns), read-only: `$client->disputes`.
 */
final class DisputeService extends AbstractService
{
    /** @param array{timeout?: int|float, maxRetries?: int} $options */
    public function retrieve(string $id, array $options = []): Dispute
    {
        return $this->requestObject(Dispute::class, 'GET', self::path('/v1/disputes/%s', $id), null, $options);
    }

    /**
     * @param array<string, mixed> $params `limit`, `startingAfter`, `endingBefore`, `paymentId`, `status`, `kind`,
     *        `createdGte`, `createdLte`
     * @param array{timeout?: int|float, maxRetries?: int} $options
     * @return Page<Dispute>
     */
    public function list(array $params = [], array $options = []): Page
    {
        return $this->requestPage(Dispute::class, '/v1/disputes', $params, $options);
    }
}
