<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;
use Pagamentos\Response;

/**
 * A registered payee that split rules can reference, with the bank account it is paid out to.
 */
final class Recipient extends ApiResource
{
    /** `rcp_...` */
    public readonly string $id;
    /** Legal name (razão social). */
    public readonly string $name;
    /** CNPJ, canonical: 14 characters, uppercase, no punctuation. */
    public readonly string $document;
    public readonly BankAccount $bankAccount;
    /** @var array<string, string> */
    public readonly array $metadata;
    public readonly bool $livemode;
    public readonly \DateTimeImmutable $createdAt;
    public readonly ?\DateTimeImmutable $updatedAt;

    /** @param array<string, mixed> $data */
    public function __construct(array $data, ?Response $lastResponse = null)
    {
        parent::__construct($data, $lastResponse);
        $f = new Fields($data, 'recipient');
        $this->id = $f->string('id');
        $this->name = $f->string('name');
        $this->document = $f->string('document');
        $this->bankAccount = new BankAccount($f->object('bankAccount'));
        $this->metadata = $f->stringMap('metadata');
        $this->livemode = $f->bool('livemode');
        $this->createdAt = $f->dateTime('createdAt');
        $this->updatedAt = $f->nullableDateTime('updatedAt');
    }
}
