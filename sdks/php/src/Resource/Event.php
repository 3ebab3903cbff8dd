<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Exception\InvalidShapeException;
use Pagamentos\Internal\Fields;
use Pagamentos\Response;

/**
 * Something that happened (`payment.approved`, `refund.created`, ...), as webhooks deliver it.
 * Its id is also the delivery's `webhook-id`: the same on every retry, so deduplicate on it.
 */
final class Event extends ApiResource
{
    /** `evt_...` */
    public readonly string $id;
    /** e.g. `payment.approved` */
    public readonly string $type;
    public readonly ?\DateTimeImmutable $createdAt;
    public readonly bool $livemode;
    /**
     * The resource the event is about, typed when this SDK knows its kind (Payment, Refund,
     * Recipient); null otherwise: read `$data` then.
     */
    public readonly Payment|Refund|Recipient|null $object;
    /**
     * `data` as sent: `['object' => [...the resource as the API returned it at that moment...]]`.
     *
     * @var array<string, mixed>
     */
    public readonly array $data;

    /** @param array<string, mixed> $data */
    public function __construct(array $data, ?Response $lastResponse = null)
    {
        parent::__construct($data, $lastResponse);
        $f = new Fields($data, 'event');
        $this->id = $f->string('id');
        $this->type = $f->string('type');
        $this->createdAt = $f->nullableDateTime('createdAt');
        $this->livemode = $f->bool('livemode');
        $this->data = $f->object('data')->raw();
        $this->object = self::typed($this->data['object'] ?? null);
    }

    private static function typed(mixed $object): Payment|Refund|Recipient|null
    {
        if (!is_array($object)) {
            return null;
        }
        $class = match ($object['object'] ?? null) {
            'payment' => Payment::class,
            'refund' => Refund::class,
            'recipient' => Recipient::class,
            default => null,
        };
        if ($class === null) {
            return null;
        }
        try {
            return new $class($object);
        } catch (InvalidShapeException) {
            // An authentic event is never refused because this SDK reads its object differently
            // (an older SDK, a newer API): the raw `data` is still there.
            return null;
        }
    }
}
