<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * No signature in `webhook-signature` matches the payload with any of the secrets: the body,
 * id or timestamp was changed, or the secret is not this endpoint's (rotated?).
 */
class SignatureMismatchException extends WebhookVerificationException
{
}
