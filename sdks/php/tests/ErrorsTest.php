<?php

declare(strict_types=1);

namespace Pagamentos\Tests;

use Pagamentos\Client;
use Pagamentos\Exception\ApiException;
use Pagamentos\Exception\AuthenticationException;
use Pagamentos\Exception\ConnectionException;
use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Exception\InvalidRequestException;
use Pagamentos\Exception\InvalidStateException;
use Pagamentos\Exception\NotFoundException;
use Pagamentos\Exception\PagamentosException;
use Pagamentos\Exception\PermissionException;
use Pagamentos\Exception\RateLimitException;
use Pagamentos\Exception\ServerException;
use Pagamentos\Resource\Payment;
use Pagamentos\Tests\Support\Process;
use Pagamentos\Tests\Support\TestServer;

/**
 * Each family of error, as the real server answers it.
 */
final class ErrorsTest extends TestCase
{
    private const VISA = ['amountInCents' => 100, 'method' => 'credit_card', 'cardToken' => 'tok_visa'];

    private static function assertEnvelope(ApiException $e, int $status, string $code): void
    {
        self::assertSame($status, $e->status);
        self::assertSame($status, $e->getCode());
        self::assertSame($code, $e->errorCode);
        self::assertNotSame('', $e->getMessage());
        self::assertMatchesRegularExpression('/^req_\w+$/', (string) $e->correlationId);
        self::assertSame($e->correlationId, $e->response->correlationId);
        self::assertSame($status, $e->response->status);
        self::assertInstanceOf(PagamentosException::class, $e);
    }

    public function testValidationErrorNamesTheParam(): void
    {
        try {
            self::client()->payments->create(['amountInCents' => 19.9, 'method' => 'pix']);
            self::fail('No error.');
        } catch (InvalidRequestException $e) {
            self::assertEnvelope($e, 400, 'VALIDATION_ERROR');
            self::assertSame('amountInCents', $e->param);
            self::assertSame(1, $e->response->attempts);
        }
    }

    public function testAnUnknownKeyIsAnAuthenticationError(): void
    {
        try {
            self::client([], 'sk_test_' . str_repeat('x', 32))->payments->list();
            self::fail('No error.');
        } catch (AuthenticationException $e) {
            self::assertEnvelope($e, 401, 'INVALID_API_KEY');
            self::assertSame(1, $e->response->attempts);
        }
    }

    public function testAPublishableKeyIsAPermissionError(): void
    {
        $keys = TestServer::main()->newAccount();
        try {
            self::client([], $keys['publishableKey'])->payments->create(['amountInCents' => 100, 'method' => 'pix']);
            self::fail('No error.');
        } catch (PermissionException $e) {
            self::assertEnvelope($e, 403, 'PERMISSION_DENIED');
        }
    }

    public function testAnUnknownPaymentIsNotFound(): void
    {
        try {
            self::client()->payments->retrieve('pay_doesnotexist');
            self::fail('No error.');
        } catch (NotFoundException $e) {
            self::assertEnvelope($e, 404, 'NOT_FOUND');
        }
    }

    public function testCancelingAnApprovedPaymentIsAnInvalidState(): void
    {
        $client = self::client();
        $payment = self::approvedCardPayment($client);
        try {
            $client->payments->cancel($payment->id);
            self::fail('No error.');
        } catch (InvalidStateException $e) {
            self::assertEnvelope($e, 409, 'INVALID_STATE');
            self::assertSame(1, $e->response->attempts, 'INVALID_STATE is a 409 that is never retried');
        }
        self::assertSame(Payment::STATUS_APPROVED, $client->payments->retrieve($payment->id)->status);
    }

    public function testRateLimitAndProviderOutageFromAServerUnderStrain(): void
    {
        // A second server: 60 requests a minute per key, and a card provider whose first
        // outage opens the breaker for ten minutes.
        $server = TestServer::start([
            'RATE_LIMIT_PER_MINUTE' => '60',
            'PROVIDER_BREAKER_FAILURES' => '1',
            'PROVIDER_BREAKER_COOLDOWN_MS' => '600000',
            'PROVIDER_MAX_ATTEMPTS' => '1',
        ]);
        try {
            $limited = $server->client(['maxRetries' => 0]);
            $rateLimited = null;
            for ($i = 0; $i < 1000 && $rateLimited === null; $i++) {
                try {
                    $limited->payments->list(['limit' => 1]);
                } catch (RateLimitException $e) {
                    $rateLimited = $e;
                }
            }
            self::assertNotNull($rateLimited, 'never rate limited');
            self::assertEnvelope($rateLimited, 429, 'RATE_LIMITED');
            self::assertGreaterThan(0, $rateLimited->retryAfter);

            $client = $server->client([], $server->newAccount()['secretKey']);
            $outage = $client->payments->create([
                'amountInCents' => 100,
                'method' => 'credit_card',
                'cardToken' => 'tok_provider_error',
            ]);
            self::eventually(
                static fn (): ?bool => $client->payments->retrieve($outage->id)->status === 'failed' ?: null,
                'provider failure',
            );
            try {
                // Default retries, but Retry-After is ten minutes: not waited, reported.
                $client->payments->create(self::VISA);
                self::fail('No error.');
            } catch (ServerException $e) {
                self::assertEnvelope($e, 503, 'PROVIDER_UNAVAILABLE');
                self::assertGreaterThan(60, $e->retryAfter);
                self::assertSame(1, $e->response->attempts);
                self::assertNotNull($e->idempotencyKey);
            }
        } finally {
            $server->process->stop();
        }
    }

    public function testNoServerIsAConnectionErrorAfterTheRetries(): void
    {
        $client = new Client('sk_test_x', ['baseUrl' => 'http://127.0.0.1:' . Process::freePort(), 'maxRetries' => 1]);
        try {
            $client->payments->create(['amountInCents' => 100, 'method' => 'pix'], ['idempotencyKey' => 'k-1']);
            self::fail('No error.');
        } catch (ConnectionException $e) {
            self::assertSame(2, $e->attempts);
            self::assertSame('k-1', $e->idempotencyKey);
            self::assertSame(CURLE_COULDNT_CONNECT, $e->curlErrno);
        }
    }

    /** @return iterable<string, array{\Closure(): mixed, string}> */
    public static function misuses(): iterable
    {
        yield 'unknown client option' => [static fn () => new Client('sk_test_x', ['max_retries' => 1]), 'max_retries'];
        yield 'bad base URL' => [static fn () => new Client('sk_test_x', ['baseUrl' => 'localhost:3000']), 'baseUrl'];
        yield 'negative retries' => [static fn () => new Client('sk_test_x', ['maxRetries' => -1]), 'maxRetries'];
        yield 'zero timeout' => [static fn () => new Client('sk_test_x', ['timeout' => 0]), 'timeout'];
        yield 'key with a newline' => [static fn () => new Client("sk_test_x\r\nX-Evil: 1"), 'API key'];
        yield 'unknown request option' => [
            static fn () => (new Client('sk_test_x'))->payments->create([], ['idempotency_key' => 'k']),
            'idempotency_key',
        ];
        yield 'key too long' => [
            static fn () => (new Client('sk_test_x'))->payments->create([], ['idempotencyKey' => str_repeat('k', 256)]),
            'idempotencyKey',
        ];
        yield 'empty id' => [static fn () => (new Client('sk_test_x'))->payments->retrieve(' '), 'id'];
        yield 'array in a query' => [
            static fn () => (new Client('sk_test_x'))->payments->list(['status' => ['a', 'b']]),
            'status',
        ];
    }

    /**
     * @dataProvider misuses
     * @param \Closure(): mixed $call
     */
    public function testMisusesAreRefusedBeforeAnythingIsSent(\Closure $call, string $named): void
    {
        try {
            $call();
            self::fail('No error.');
        } catch (InvalidArgumentException $e) {
            self::assertStringContainsString($named, $e->getMessage());
        }
    }

    public function testIdsAreEncodedIntoThePath(): void
    {
        $this->expectException(NotFoundException::class);
        self::client()->payments->retrieve('../refunds');
    }
}
