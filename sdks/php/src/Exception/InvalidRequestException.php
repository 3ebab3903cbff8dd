<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 400 VALIDATION_ERROR (a field is invalid: see `$param`), 405, 413 PAYLOAD_TOO_LARGE,
 * 415 UNSUPPORTED_MEDIA_TYPE and any other 4xx without a family of its own. Fix the request;
 * retrying it unchanged gives the same answer.
 */
class InvalidRequestException extends ApiException
{
}
