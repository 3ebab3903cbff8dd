<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

use Pagamentos\Response;

/**
 * The API answered something this SDK cannot read (not JSON, or not the expected shape).
 */
class UnexpectedResponseException extends ApiException
{
    public static function because(Response $response, string $message): self
    {
        return new self(
            $message,
            $response->status,
            null,
            $response->correlationId,
            null,
            null,
            null,
            $response->idempotencyKey,
            $response,
        );
    }
}
