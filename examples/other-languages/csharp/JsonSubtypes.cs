// A stand-in for the JsonSubTypes library (NuGet only, not in Debian), which OpenAPI Generator 5's
// csharp models name on a oneOf with a discriminator. That generator flattens such a oneOf into
// one class (all the branches' fields), so reading it needs no subtype: fill the class itself.
using System;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace JsonSubTypes
{
    public class JsonSubtypes : JsonConverter
    {
        readonly string discriminator;
        public JsonSubtypes(string discriminator) { this.discriminator = discriminator; }
        public override bool CanWrite { get { return false; } }
        public override bool CanConvert(Type objectType) { return true; }
        public override object ReadJson(JsonReader reader, Type objectType, object existingValue, JsonSerializer serializer)
        {
            if (reader.TokenType == JsonToken.Null) return null;
            var json = JObject.Load(reader);
            if (json[discriminator] == null) throw new JsonSerializationException("no " + discriminator + " in " + objectType.Name);
            var value = Activator.CreateInstance(objectType);
            serializer.Populate(json.CreateReader(), value);
            return value;
        }
        public override void WriteJson(JsonWriter writer, object value, JsonSerializer serializer) { throw new NotSupportedException(); }
    }
}
