<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The API did not answer within the timeout, after every retry.
 */
class TimeoutException extends ConnectionException
{
}
