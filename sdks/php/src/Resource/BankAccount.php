<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/** Where a recipient is paid out. */
final class BankAccount
{
    public const TYPE_CHECKING = 'checking';
    public const TYPE_SAVINGS = 'savings';
    public const TYPE_PAYMENT = 'payment';

    /** Bank code (COMPE), 3 digits. */
    public readonly string $bankCode;
    public readonly string $agency;
    /** Digits, a hyphen and a check digit. */
    public readonly string $account;
    /** One of the TYPE_ constants. */
    public readonly string $accountType;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->bankCode = $f->string('bankCode');
        $this->agency = $f->string('agency');
        $this->account = $f->string('account');
        $this->accountType = $f->string('accountType');
    }
}
