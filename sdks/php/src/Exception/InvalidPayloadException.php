<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The signature is valid but the body is not a JSON event object.
 */
class InvalidPayloadException extends WebhookVerificationException
{
}
