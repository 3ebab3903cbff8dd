<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** What the payer needs to pay a Pix payment, and a live Pix's identifiers in the Pix system. */
final class Pix
{
    /** The BR Code "copia e cola" (EMV, br.gov.bcb.pix). */
    public readonly string $copyPaste;
    /** The same BR Code as a QR code, SVG markup. */
    public readonly string $qrCodeSvg;
    public readonly \DateTimeImmutable $expiresAt;
    /** Live Pix: the charge's txid at the PSP (API Pix cob); null in the sandbox. */
    public readonly ?string $txid;
    /** Live Pix, once paid: the end-to-end id (E2EID) of the Pix that paid it; null until then. */
    public readonly ?string $endToEndId;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->copyPaste = $f->string('copyPaste');
        $this->qrCodeSvg = $f->string('qrCodeSvg');
        $this->expiresAt = $f->dateTime('expiresAt');
        $this->txid = $f->nullableString('txid');
        $this->endToEndId = $f->nullableString('endToEndId');
    }
}
