<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 404 NOT_FOUND: no such object for this account and mode (sandbox and live never mix).
 */
class NotFoundException extends ApiException
{
}
