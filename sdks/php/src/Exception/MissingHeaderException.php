<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * A Standard Webhooks header is absent (or empty): `$header` names it.
 */
class MissingHeaderException extends WebhookVerificationException
{
    public function __construct(public readonly string $header)
    {
        parent::__construct(sprintf(
            'The %s header is missing: pass every request header (getallheaders(), $_SERVER '
            . 'or your framework\'s header bag).',
            $header,
        ));
    }
}
