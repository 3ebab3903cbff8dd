<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** What the payer needs to pay a Pix payment. */
final class Pix
{
    /** The BR Code "copia e cola" (EMV, br.gov.bcb.pix). */
    public readonly string $copyPaste;
    /** The same BR Code as a QR code, SVG markup. */
    public readonly string $qrCodeSvg;
    public readonly \DateTimeImmutable $expiresAt;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->copyPaste = $f->string('copyPaste');
        $this->qrCodeSvg = $f->string('qrCodeSvg');
        $this->expiresAt = $f->dateTime('expiresAt');
    }
}
