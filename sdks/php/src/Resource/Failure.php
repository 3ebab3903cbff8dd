<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** Why a payment was declined or failed. */
final class Failure
{
    public readonly string $code;
    public readonly string $message;
    /** @var array<mixed> */
    private readonly array $data;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->code = $f->string('code');
        $this->message = $f->string('message');
        $this->data = $f->all();
    }

    /**
     * The failure as the API sent it, decoded (fields newer than this SDK included), as the
     * resources' toArray().
     *
     * @return array<mixed>
     */
    public function toArray(): array
    {
        return $this->data;
    }
}
