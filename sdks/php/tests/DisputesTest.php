<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Exception\InvalidRequestException;
use Pagamentos\Exception\NotFoundException;
use Pagamentos\Resource\Dispute;
use Pagamentos\Tests\Support\TestServer;

final class DisputesTest extends TestCase
{
    public function testReadsDisputesOneByOneAndAsPagesWithFilters(): void
    {
        $account = TestServer::main()->newAccount();
        $client = self::client([], $account['secretKey']);
        $first = self::approvedCardPayment($client, 4000);
        $second = self::approvedCardPayment($client, 6000);
        $server = TestServer::main();
        self::assertTrue($server->applyDisputeStage($first->id, 'PHPDSP1', 1, Dispute::STATUS_NEEDS_RESPONSE));
        self::assertTrue($server->applyDisputeStage($second->id, 'PHPDSP2', 1, Dispute::STATUS_NEEDS_RESPONSE));
        self::assertTrue($server->applyDisputeStage($second->id, 'PHPDSP2', 2, Dispute::STATUS_LOST));
        self::assertFalse($server->applyDisputeStage($second->id, 'PHPDSP2', 1, Dispute::STATUS_NEEDS_RESPONSE));

        $listed = array_map(
            static fn (Dispute $d) => $d->paymentId,
            iterator_to_array($client->disputes->list(['limit' => 1])->autoPaging()),
        );
        self::assertSame([$second->id, $first->id], $listed, 'newest first, across pages');

        $lost = $client->disputes->list(['status' => Dispute::STATUS_LOST]);
        self::assertCount(1, $lost->data);
        $dispute = $client->disputes->retrieve($lost->data[0]->id);
        self::assertInstanceOf(Dispute::class, $dispute);
        self::assertMatchesRegularExpression('/^dp_\w+$/', $dispute->id);
        self::assertSame($second->id, $dispute->paymentId);
        self::assertSame(Dispute::KIND_CARD_CHARGEBACK, $dispute->kind);
        self::assertSame(6000, $dispute->amount);
        self::assertSame(6000, $dispute->amountDebited);
        self::assertSame('BRL', $dispute->currency);
        self::assertSame('10.4', $dispute->reasonCode);
        self::assertSame('2026-12-19T10:00:00+00:00', $dispute->respondBy?->format(DATE_ATOM));
        self::assertNotNull($dispute->closedAt);
        self::assertNull($dispute->refundId);
        self::assertFalse($dispute->livemode);

        $open = $client->disputes->list(['paymentId' => $first->id]);
        $statuses = array_map(static fn (Dispute $d) => $d->status, $open->data);
        self::assertSame([Dispute::STATUS_NEEDS_RESPONSE], $statuses);
        self::assertNull($open->data[0]->closedAt);
        self::assertCount(0, $client->disputes->list(['kind' => Dispute::KIND_PIX_MED])->data);
    }

    public function testAnUnknownDisputeIsNotFoundAndABadFilterIsRefused(): void
    {
        $client = self::client();
        try {
            $client->disputes->retrieve('dp_01jc6v8x2a9m3yq0d7b4e5f6g8');
            self::fail('An unknown dispute was found.');
        } catch (NotFoundException $e) {
            self::assertSame(404, $e->status);
        }
        try {
            $client->disputes->list(['status' => 'open']);
            self::fail('An unknown status was accepted.');
        } catch (InvalidRequestException $e) {
            self::assertSame('status', $e->param);
        }
    }
}
