<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;
use Pagamentos\Response;

/**
 * A full or partial refund of an approved payment. Amounts are integer centavos.
 */
final class Refund extends ApiResource
{
    public const STATUS_PENDING = 'pending';
    public const STATUS_SUCCEEDED = 'succeeded';
    public const STATUS_FAILED = 'failed';

    public const KIND_REQUESTED = 'requested';
    public const KIND_MED_FRAUD = 'med_fraud';
    public const KIND_MED_OPERATIONAL = 'med_operational';

    /** `ref_...` */
    public readonly string $id;
    public readonly string $paymentId;
    /** Centavos returned to the payer. */
    public readonly int $amount;
    /** The part of the processing fee given back. */
    public readonly int $feeRefunded;
    /** amount - feeRefunded: what comes off the payees' receivables. */
    public readonly int $netAmount;
    /** One of the STATUS_ constants: pending until the provider confirms. */
    public readonly string $status;
    /** requested_by_customer, duplicate, fraudulent, or null. */
    public readonly ?string $reason;
    /** One of the KIND_ constants: requested (POST /v1/refunds) or a live Pix returned by the payer's bank (MED). */
    public readonly string $kind;
    /** A live Pix refund: its devolução at the PSP; null for cards and in the sandbox. */
    public readonly ?PixReturn $pixReturn;
    /** @var array<string, string> */
    public readonly array $metadata;
    public readonly bool $livemode;
    public readonly \DateTimeImmutable $createdAt;

    /** @param array<string, mixed> $data */
    public function __construct(array $data, ?Response $lastResponse = null)
    {
        parent::__construct($data, $lastResponse);
        $f = new Fields($data, 'refund');
        $this->id = $f->string('id');
        $this->paymentId = $f->string('paymentId');
        $this->amount = $f->int('amount');
        $this->feeRefunded = $f->int('feeRefunded');
        $this->netAmount = $f->int('netAmount');
        $this->status = $f->string('status');
        $this->reason = $f->nullableString('reason');
        $this->kind = $f->nullableString('kind') ?? self::KIND_REQUESTED;
        $pixReturn = $f->nullableObject('pixReturn');
        $this->pixReturn = $pixReturn === null ? null : new PixReturn($pixReturn);
        $this->metadata = $f->stringMap('metadata');
        $this->livemode = $f->bool('livemode');
        $this->createdAt = $f->dateTime('createdAt');
    }
}
