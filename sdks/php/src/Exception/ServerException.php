<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 5xx: INTERNAL_ERROR, SERVICE_UNAVAILABLE, PROVIDER_UNAVAILABLE or a gateway error, after every
 * retry. With the same Idempotency-Key (`$idempotencyKey`) a later retry is safe.
 */
class ServerException extends ApiException
{
}
