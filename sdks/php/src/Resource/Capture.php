<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/**
 * A live card payment with manual capture: its capture. `pending` (not asked yet:
 * PaymentService::capture), `processing` (asked; the acquirer confirms asynchronously),
 * `succeeded` (the payment is approved) or `failed` (the payment failed; the authorization was
 * given back).
 */
final class Capture
{
    public const STATUS_PENDING = 'pending';
    public const STATUS_PROCESSING = 'processing';
    public const STATUS_SUCCEEDED = 'succeeded';
    public const STATUS_FAILED = 'failed';

    /** `manual`. */
    public readonly string $method;
    public readonly string $status;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->method = $f->string('method');
        $this->status = $f->string('status');
    }
}
