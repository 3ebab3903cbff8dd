// The generated C# models (OpenAPI Generator 5, from /v1/openapi-3.0.json) reading real answers
// of a running server, with Newtonsoft.Json: run by `npm run test:clients`.
using System;
using System.Linq;
using System.Net.Http;
using System.Text;
using Newtonsoft.Json;
using Pagamentos.Client.Model;

static class Program
{
    static readonly HttpClient Http = new HttpClient();
    static string Base = Environment.GetEnvironmentVariable("PAGAMENTOS_URL");

    static T Call<T>(string method, string path, object body, string bearer, out int status)
    {
        var req = new HttpRequestMessage(new HttpMethod(method), Base + path);
        if (body != null) req.Content = new StringContent(JsonConvert.SerializeObject(body, new JsonSerializerSettings { NullValueHandling = NullValueHandling.Ignore }), Encoding.UTF8, "application/json");
        if (bearer != null) req.Headers.Add("Authorization", "Bearer " + bearer);
        if (method == "POST") req.Headers.Add("Idempotency-Key", Guid.NewGuid().ToString());
        var res = Http.SendAsync(req).Result;
        status = (int)res.StatusCode;
        var text = res.Content.ReadAsStringAsync().Result;
        return JsonConvert.DeserializeObject<T>(text, new JsonSerializerSettings { MissingMemberHandling = MissingMemberHandling.Error });
    }
    static T Ok<T>(string method, string path, object body, string bearer)
    {
        int status;
        var value = Call<T>(method, path, body, bearer, out status);
        if (status != 200) throw new Exception(method + " " + path + " answered " + status);
        return value;
    }
    static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("failed: " + what);
        Console.WriteLine("ok - " + what);
    }

    static int Main()
    {
        var account = Ok<SandboxAccount>("POST", "/v1/sandbox/accounts", new SandboxAccountRequest(name: "Loja C#"), null);
        var sk = account.Keys.SecretKey.Key;
        Check(sk.StartsWith("sk_test_"), "signed up: secret key " + sk.Substring(0, 8) + "...");
        var card = new CardPaymentRequest(amountInCents: 1000000000L, method: CardPaymentRequest.MethodEnum.Creditcard, cardToken: "tok_visa");
        Payment payment = null;
        for (int i = 0; i < 3; i++) payment = Ok<Payment>("POST", "/v1/payments", card, sk);
        for (int i = 0; i < 200 && payment.Status == Payment.StatusEnum.Pending; i++)
        {
            System.Threading.Thread.Sleep(100);
            payment = Ok<Payment>("GET", "/v1/payments/" + payment.Id, null, sk);
        }
        Check(payment.Status == Payment.StatusEnum.Approved && payment.Amount == 1000000000L && payment.Card.Last4 == "4242", "card payment " + payment.Id + " approved, read as Payment");
        Balance balance = null;
        for (int i = 0; i < 200; i++)
        {
            balance = Ok<Balance>("GET", "/v1/balance", null, sk);
            if (balance.Merchant.Pending + balance.Merchant.Available > int.MaxValue) break;
            System.Threading.Thread.Sleep(100);
        }
        long total = balance.Merchant.Pending + balance.Merchant.Available;
        Check(total > int.MaxValue, "balance of " + total + " centavos parses as long (over 2^31)");
        var page = Ok<PaymentList>("GET", "/v1/payments?limit=10", null, sk);
        Check(page.Data.Any(p => p.Id == payment.Id), "listed, read as PaymentList");
        int status;
        var refused = Call<ErrorResponse>("POST", "/v1/payments", new CardPaymentRequest(amountInCents: 2500L, method: CardPaymentRequest.MethodEnum.Creditcard, cardToken: "not a token"), sk, out status);
        Check(status == 400 && refused.Error.Code == ErrorBody.CodeEnum.VALIDATIONERROR && refused.Error.Param == "cardToken" && refused.Error.CorrelationId.StartsWith("req_"),
            "refused: " + refused.Error.Code + " on " + refused.Error.Param + " (" + refused.Error.CorrelationId + ")");
        Console.WriteLine("csharp: all checks passed");
        return 0;
    }
}
