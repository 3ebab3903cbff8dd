<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 409 IDEMPOTENCY_KEY_IN_USE (still in flight after every retry) or 422
 * IDEMPOTENCY_KEY_REUSED (the same key was used for a different request).
 */
class IdempotencyException extends ApiException
{
}
