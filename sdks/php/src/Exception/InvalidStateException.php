<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 409 INVALID_STATE: the object's state forbids the operation (cancel an approved payment,
 * refund a pending one, ...).
 */
class InvalidStateException extends ApiException
{
}
