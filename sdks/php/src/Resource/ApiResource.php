<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Response;

/**
 * An object of the API (payment, recipient, refund, ...): typed, read-only properties, plus
 * the answer it came from and the decoded JSON as sent (fields newer than this SDK included).
 */
abstract class ApiResource
{
    /**
     * @param array<string, mixed> $data the decoded JSON object
     * @param Response|null $lastResponse the HTTP answer it came from; null inside a list page
     *                                    (the page has it) or a webhook event
     */
    public function __construct(private readonly array $data, public readonly ?Response $lastResponse = null)
    {
    }

    /**
     * The object as the API sent it, decoded.
     *
     * @return array<string, mixed>
     */
    public function toArray(): array
    {
        return $this->data;
    }
}
