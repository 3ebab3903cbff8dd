<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;
use Pagamentos\Response;

/**
 * A card chargeback or a Pix returned by the payer's bank (MED). Read-only: its source makes and
 * moves it. Amounts are integer centavos.
 */
final class Dispute extends ApiResource
{
    public const STATUS_NEEDS_RESPONSE = 'needs_response';
    public const STATUS_UNDER_REVIEW = 'under_review';
    public const STATUS_WON = 'won';
    public const STATUS_LOST = 'lost';

    public const KIND_CARD_CHARGEBACK = 'card_chargeback';
    public const KIND_PIX_MED = 'pix_med';

    /** `dp_...` */
    public readonly string $id;
    public readonly string $paymentId;
    /** One of the KIND_ constants. */
    public readonly string $kind;
    /** One of the STATUS_ constants. */
    public readonly string $status;
    /** Centavos disputed. */
    public readonly int $amount;
    public readonly string $currency;
    /** Centavos the merchant and the split's recipients give up for it now (lost: the amount). */
    public readonly int $amountDebited;
    public readonly ?string $reason;
    /** The card scheme's reason code; null for a Pix MED. */
    public readonly ?string $reasonCode;
    /** When the defence period ends, when the source gives one. */
    public readonly ?\DateTimeImmutable $respondBy;
    /** A Pix MED: the refund that recorded the return. */
    public readonly ?string $refundId;
    public readonly bool $livemode;
    public readonly \DateTimeImmutable $createdAt;
    public readonly \DateTimeImmutable $updatedAt;
    /** When it last became won or lost; null while open. */
    public readonly ?\DateTimeImmutable $closedAt;

    /** @param array<string, mixed> $data */
    public function __construct(array $data, ?Response $lastResponse = null)
    {
        parent::__construct($data, $lastResponse);
        $f = new Fields($data, 'dispute');
        $this->id = $f->string('id');
        $this->paymentId = $f->string('paymentId');
        $this->kind = $f->string('kind');
        $this->status = $f->string('status');
        $this->amount = $f->int('amount');
        $this->currency = $f->string('currency');
        $this->amountDebited = $f->int('amountDebited');
        $this->reason = $f->nullableString('reason');
        $this->reasonCode = $f->nullableString('reasonCode');
        $this->respondBy = $f->nullableDateTime('respondBy');
        $this->refundId = $f->nullableString('refundId');
        $this->livemode = $f->bool('livemode');
        $this->createdAt = $f->dateTime('createdAt');
        $this->updatedAt = $f->dateTime('updatedAt');
        $this->closedAt = $f->nullableDateTime('closedAt');
    }
}
