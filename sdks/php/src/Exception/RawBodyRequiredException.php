<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The payload given was not the raw body (a string): signatures cover the exact bytes sent,
 * so a decoded array or object can never be verified. Read `file_get_contents('php://input')`, or
 * `$request->getContent()` in Laravel/Symfony.
 */
class RawBodyRequiredException extends WebhookVerificationException
{
}
