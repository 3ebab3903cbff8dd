<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * A webhook delivery that must not be trusted. Answer it with 400 and do not process it.
 * Each reason has its own subclass, so the cause is plain in your logs.
 */
class WebhookVerificationException extends \UnexpectedValueException implements PagamentosException
{
}
