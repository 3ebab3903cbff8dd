<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 429 RATE_LIMITED, after every retry: `$retryAfter` says how long to wait.
 */
class RateLimitException extends ApiException
{
}
