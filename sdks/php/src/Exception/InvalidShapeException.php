<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * Data that does not have the shape of the object it should become (a field missing or of
 * another type). From the API it comes wrapped in an UnexpectedResponseException.
 */
class InvalidShapeException extends \UnexpectedValueException implements PagamentosException
{
}
