<?php

declare(strict_types=1);

namespace Pagamentos;

use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Internal\Options;
use Pagamentos\Internal\Requestor;
use Pagamentos\Service\DisputeService;
use Pagamentos\Service\PaymentService;
use Pagamentos\Service\RecipientService;
use Pagamentos\Service\RefundService;

/**
 * The entry point: `new Client('sk_test_...', ['baseUrl' => 'https://...'])`, then
 * `$client->payments->create([...])`.
 *
 * Options (all optional): `baseUrl` (default http://localhost:3000, what `npm start` serves),
 * `timeout` (seconds per attempt, default 80), `connectTimeout` (seconds, default 30),
 * `maxRetries` (default 2).
 */
final class Client
{
    public const VERSION = '0.1.0';

    public readonly PaymentService $payments;
    public readonly RecipientService $recipients;
    public readonly RefundService $refunds;
    public readonly DisputeService $disputes;

    private readonly Requestor $requestor;

    /**
     * @param string $apiKey a secret key: sk_test_... (sandbox) or sk_live_...
     * @param array{baseUrl?: string, timeout?: int|float, connectTimeout?: int|float, maxRetries?: int} $options
     */
    public function __construct(string $apiKey, array $options = [])
    {
        if (!extension_loaded('curl')) {
            throw new \RuntimeException('The Pagamentos SDK needs PHP\'s curl extension (php-curl).');
        }
        if (preg_match('/^[\x21-\x7E]+$/', $apiKey) !== 1) {
            throw new InvalidArgumentException('The API key is empty or has spaces or control characters.');
        }
        $options = Options::client($options);
        $this->requestor = new Requestor(
            $apiKey,
            $options['baseUrl'],
            $options['timeout'],
            $options['connectTimeout'],
            $options['maxRetries'],
        );
        $this->payments = new PaymentService($this);
        $this->recipients = new RecipientService($this);
        $this->refunds = new RefundService($this);
        $this->disputes = new DisputeService($this);
    }

    /**
     * Any API call, for what has no service here yet (webhook endpoints, events, ...), with the
     * same authentication, idempotency and retries. Returns the raw answer: `->json()` decodes it.
     *
     * @param string $method GET, POST, PATCH, DELETE
     * @param string $path e.g. `/v1/webhook-endpoints`
     * @param array<string, mixed>|null $params the query for GET, the JSON body otherwise (null: none)
     * @param array{idempotencyKey?: string, timeout?: int|float, maxRetries?: int} $options
     * @throws Exception\ApiException when the API answers an error (after retries)
     * @throws Exception\ConnectionException when it does not answer (after retries)
     */
    public function request(string $method, string $path, ?array $params = null, array $options = []): Response
    {
        $isGet = in_array(strtoupper($method), ['GET', 'HEAD'], true);
        return $this->requestor->request(
            $method,
            $path,
            $isGet ? ($params ?? []) : [],
            $isGet ? null : $params,
            $options,
        );
    }
}
