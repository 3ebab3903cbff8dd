<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * A mistake in how the SDK was called (an unknown option, an empty id, ...): nothing was sent.
 */
class InvalidArgumentException extends \InvalidArgumentException implements PagamentosException
{
}
