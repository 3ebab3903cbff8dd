<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** The payer, as given on create; the document comes back masked. */
final class Customer
{
    public readonly ?string $name;
    public readonly ?string $email;
    public readonly ?string $document;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->name = $f->nullableString('name');
        $this->email = $f->nullableString('email');
        $this->document = $f->nullableString('document');
    }
}
