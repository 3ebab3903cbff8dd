<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** Why a payment was declined or failed. */
final class Failure
{
    public readonly string $code;
    public readonly string $message;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->code = $f->string('code');
        $this->message = $f->string('message');
    }
}
