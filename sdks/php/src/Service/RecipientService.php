<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Page;
use Pagamentos\Resource\Recipient;

/**
 * Recipients (payees of split rules): `$client->recipients`.
 */
final class RecipientService extends AbstractService
{
    /**
     * Registers a recipient.
     *
     * @param array<string, mixed> $params `name`, `document` (CNPJ), `bankAccount` {bankCode, agency,
     *        account, accountType}, optionally `metadata`
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options
     */
    public function create(array $params, array $options = []): Recipient
    {
        return $this->requestObject(Recipient::class, 'POST', '/v1/recipients', $params, $options);
    }

    /** @param array{timeout?: int|float, maxRetries?: int} $options */
    public function retrieve(string $id, array $options = []): Recipient
    {
        return $this->requestObject(Recipient::class, 'GET', self::path('/v1/recipients/%s', $id), null, $options);
    }

    /**
     * @param array<string, mixed> $params `limit`, `startingAfter`, `endingBefore`, `document`, `name`,
     *        `createdGte`, `createdLte`
     * @param array{timeout?: int|float, maxRetries?: int} $options
     * @return Page<Recipient>
     */
    public function list(array $params = [], array $options = []): Page
    {
        return $this->requestPage(Recipient::class, '/v1/recipients', $params, $options);
    }
}
