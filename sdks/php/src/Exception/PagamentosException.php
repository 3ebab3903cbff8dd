<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * Implemented by every exception this SDK throws, so one `catch (PagamentosException $e)`
 * catches them all.
 */
interface PagamentosException extends \Throwable
{
}
