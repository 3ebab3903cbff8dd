<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The payload given was not the raw body: not a string (signatures cover the exact bytes sent,
 * so a decoded array or object can never be verified), or an empty one (a delivery always has a
 * body; `php://input` read a second time, or after a framework consumed it, gives ''). Read
 * `file_get_contents('php://input')` once, or `$request->getContent()` in Laravel/Symfony.
 */
class RawBodyRequiredException extends WebhookVerificationException
{
}
