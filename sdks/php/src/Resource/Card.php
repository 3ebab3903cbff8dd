<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** The card of a card payment: never more than its brand and last four digits. */
final class Card
{
    public readonly string $brand;
    public readonly string $last4;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->brand = $f->string('brand');
        $this->last4 = $f->string('last4');
    }
}
