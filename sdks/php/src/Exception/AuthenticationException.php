<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 401 AUTHENTICATION_REQUIRED or INVALID_API_KEY: the secret key is missing, unknown or revoked.
 */
class AuthenticationException extends ApiException
{
}
