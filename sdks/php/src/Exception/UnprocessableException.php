<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 422 UNPROCESSABLE: well-formed, but refused by a business rule (a refund above the
 * refundable amount, a card token already used, ...).
 */
class UnprocessableException extends ApiException
{
}
