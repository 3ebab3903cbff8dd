<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;
use Pagamentos\Response;

/**
 * A Pix or card payment. Amounts are integer centavos (1990 is R$ 19,90).
 */
final class Payment extends ApiResource
{
    public const STATUS_PENDING = 'pending';
    /** A live card payment that needs its buyer (3-D Secure): see $nextAction. */
    public const STATUS_REQUIRES_ACTION = 'requires_action';
    /** A live card payment authorized and not yet captured (manual capture): see $capture. */
    public const STATUS_REQUIRES_CAPTURE = 'requires_capture';
    public const STATUS_APPROVED = 'approved';
    public const STATUS_DECLINED = 'declined';
    public const STATUS_FAILED = 'failed';
    public const STATUS_CANCELED = 'canceled';
    public const STATUS_EXPIRED = 'expired';
    public const STATUS_PARTIALLY_REFUNDED = 'partially_refunded';
    public const STATUS_REFUNDED = 'refunded';

    public const METHOD_PIX = 'pix';
    public const METHOD_CREDIT_CARD = 'credit_card';

    /** `pay_...` */
    public readonly string $id;
    /** One of the STATUS_ constants (a string, so a status added later never breaks reading). */
    public readonly string $status;
    /** Centavos. */
    public readonly int $amount;
    public readonly string $currency;
    /** METHOD_PIX or METHOD_CREDIT_CARD. */
    public readonly string $method;
    public readonly ?string $description;
    /** @var array<string, string> */
    public readonly array $metadata;
    public readonly ?Customer $customer;
    public readonly ?int $installments;
    /** Card payments: brand and last four digits. */
    public readonly ?Card $card;
    /** Pix payments: the BR Code and its QR code. */
    public readonly ?Pix $pix;
    /** Declined or failed payments: why. */
    public readonly ?Failure $failure;
    /** A `requires_action` payment: what its buyer must do (3-D Secure). */
    public readonly ?NextAction $nextAction;
    /** Card: the page the buyer comes back to after 3-D Secure, as sent on create. */
    public readonly ?string $returnUrl;
    /** A live card payment with manual capture: its capture. */
    public readonly ?Capture $capture;
    /** Centavos refunded so far. */
    public readonly int $amountRefunded;
    /** The processing fee in centavos, once approved. */
    public readonly ?int $feeAmount;
    /** amount - feeAmount, once approved. */
    public readonly ?int $netAmount;
    /** False in the sandbox. */
    public readonly bool $livemode;
    public readonly \DateTimeImmutable $createdAt;
    public readonly ?\DateTimeImmutable $updatedAt;

    /** @param array<string, mixed> $data */
    public function __construct(array $data, ?Response $lastResponse = null)
    {
        parent::__construct($data, $lastResponse);
        $f = new Fields($data, 'payment');
        $this->id = $f->string('id');
        $this->status = $f->string('status');
        $this->amount = $f->int('amount');
        $this->currency = $f->string('currency');
        $this->method = $f->string('method');
        $this->description = $f->nullableString('description');
        $this->metadata = $f->stringMap('metadata');
        $customer = $f->nullableObject('customer');
        $this->customer = $customer === null ? null : new Customer($customer);
        $this->installments = $f->nullableInt('installments');
        $card = $f->nullableObject('card');
        $this->card = $card === null ? null : new Card($card);
        $pix = $f->nullableObject('pix');
        $this->pix = $pix === null ? null : new Pix($pix);
        $failure = $f->nullableObject('failure');
        $this->failure = $failure === null ? null : new Failure($failure);
        $nextAction = $f->nullableObject('nextAction');
        $this->nextAction = $nextAction === null ? null : new NextAction($nextAction);
        $this->returnUrl = $f->nullableString('returnUrl');
        $capture = $f->nullableObject('capture');
        $this->capture = $capture === null ? null : new Capture($capture);
        $this->amountRefunded = $f->nullableInt('amountRefunded') ?? 0;
        $this->feeAmount = $f->nullableInt('feeAmount');
        $this->netAmount = $f->nullableInt('netAmount');
        $this->livemode = $f->bool('livemode');
        $this->createdAt = $f->dateTime('createdAt');
        $this->updatedAt = $f->nullableDateTime('updatedAt');
    }
}
