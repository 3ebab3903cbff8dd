<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** A live Pix refund as a devolução in the Pix system (API Pix). */
final class PixReturn
{
    public const NATURE_ORIGINAL = 'ORIGINAL';
    public const NATURE_MED_OPERACIONAL = 'MED_OPERACIONAL';
    public const NATURE_MED_FRAUDE = 'MED_FRAUDE';

    public const STATUS_EM_PROCESSAMENTO = 'EM_PROCESSAMENTO';
    public const STATUS_DEVOLVIDO = 'DEVOLVIDO';
    public const STATUS_NAO_REALIZADO = 'NAO_REALIZADO';

    /** The devolução's id at the PSP (ours, derived from the refund id, or the PSP's for a MED). */
    public readonly string $id;
    /** The return's id in the Pix system, what the payer's bank shows; null until the PSP gives it. */
    public readonly ?string $rtrId;
    /** One of the NATURE_ constants: ORIGINAL (asked by us) or a MED started by the payer's bank. */
    public readonly string $nature;
    /** One of the STATUS_ constants. */
    public readonly string $status;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->id = $f->string('id');
        $this->rtrId = $f->nullableString('rtrId');
        $this->nature = $f->string('nature');
        $this->status = $f->string('status');
    }
}
