<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The secret is not a `whsec_...` signing secret (or is empty, or not base64 after the prefix).
 * It is your configuration, not the delivery, that is wrong.
 */
class InvalidSecretException extends WebhookVerificationException
{
}
