<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\InvalidRequestException;
use Pagamentos\Exception\NotFoundException;
use Pagamentos\Resource\BankAccount;
use Pagamentos\Resource\Recipient;

final class RecipientsTest extends TestCase
{
    private const BANK_ACCOUNT = [
        'bankCode' => '341',
        'agency' => '0001',
        'account' => '12345-6',
        'accountType' => 'checking',
    ];

    public function testRegistersRetrievesAndListsRecipients(): void
    {
        $client = self::client();
        $name = 'Loja Exemplo ' . bin2hex(random_bytes(4)) . ' Ltda';
        $recipient = $client->recipients->create([
            'name' => $name,
            'document' => '11.222.333/0001-81',
            'bankAccount' => self::BANK_ACCOUNT,
            'metadata' => ['sellerId' => '42'],
        ]);

        self::assertInstanceOf(Recipient::class, $recipient);
        self::assertMatchesRegularExpression('/^rcp_\w+$/', $recipient->id);
        self::assertSame($name, $recipient->name);
        self::assertSame('11222333000181', $recipient->document);
        self::assertInstanceOf(BankAccount::class, $recipient->bankAccount);
        self::assertSame('341', $recipient->bankAccount->bankCode);
        self::assertSame('12345-6', $recipient->bankAccount->account);
        self::assertSame(BankAccount::TYPE_CHECKING, $recipient->bankAccount->accountType);
        self::assertSame(['sellerId' => '42'], $recipient->metadata);
        self::assertSame(200, $recipient->lastResponse?->status);

        $fetched = $client->recipients->retrieve($recipient->id);
        self::assertSame($recipient->id, $fetched->id);
        self::assertSame($recipient->document, $fetched->document);

        $page = $client->recipients->list(['name' => $name]);
        self::assertSame([$recipient->id], array_map(static fn (Recipient $r) => $r->id, $page->data));
        $walk = $client->recipients->list(['limit' => 1])->autoPaging();
        $all = array_map(static fn (Recipient $r) => $r->id, iterator_to_array($walk));
        self::assertContains($recipient->id, $all);
        self::assertSame(count($all), count(array_unique($all)));
    }

    public function testRefusesAnInvalidCnpjNamingTheField(): void
    {
        try {
            self::client()->recipients->create([
                'name' => 'Loja Exemplo Ltda',
                'document' => '11.222.333/0001-82',
                'bankAccount' => self::BANK_ACCOUNT,
            ]);
            self::fail('An invalid CNPJ was accepted.');
        } catch (InvalidRequestException $e) {
            self::assertSame(400, $e->status);
            self::assertSame('VALIDATION_ERROR', $e->errorCode);
            self::assertSame('document', $e->param);
        }
    }

    public function testAnUnknownRecipientIsNotFound(): void
    {
        $this->expectException(NotFoundException::class);
        self::client()->recipients->retrieve('rcp_doesnotexist');
    }
}
