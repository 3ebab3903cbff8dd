<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * A Standard Webhooks header is malformed (a timestamp that is not unix seconds, a signature
 * header with no `v1,` signature, two different values, ...): `$header` names it.
 */
class InvalidHeaderException extends WebhookVerificationException
{
    public function __construct(public readonly string $header, string $message)
    {
        parent::__construct($message);
    }
}
