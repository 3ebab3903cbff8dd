package example;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.*;
import com.fasterxml.jackson.databind.deser.Deserializers;
import com.fasterxml.jackson.databind.deser.ValueInstantiator;
import com.fasterxml.jackson.databind.deser.std.ReferenceTypeDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.Serializers;
import com.fasterxml.jackson.databind.ser.std.ReferenceTypeSerializer;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import com.fasterxml.jackson.databind.type.ReferenceType;
import com.fasterxml.jackson.databind.type.TypeBindings;
import com.fasterxml.jackson.databind.type.TypeFactory;
import com.fasterxml.jackson.databind.type.TypeModifier;
import com.fasterxml.jackson.databind.util.NameTransformer;
import java.io.IOException;
import java.lang.reflect.Type;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.Optional;

// The ObjectMapper the generated models need. The generator's own ApiProviders registers
// jackson-datatype-jdk8 (java.util.Optional, its type for nullable fields) and
// jackson-datatype-jsr310 (java.time): both are on Maven Central, neither is in Debian, so this
// is the little of them that the models use. With Maven, use those modules instead.
final class Json {
  static ObjectMapper mapper() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.setSerializationInclusion(JsonInclude.Include.NON_NULL);
    SimpleModule time = new SimpleModule("java-time");
    time.addSerializer(OffsetDateTime.class, ToStringSerializer.instance);
    time.addSerializer(LocalDate.class, ToStringSerializer.instance);
    time.addDeserializer(OffsetDateTime.class, new StdDeserializer<OffsetDateTime>(OffsetDateTime.class) {
      @Override public OffsetDateTime deserialize(JsonParser p, DeserializationContext c) throws IOException { return OffsetDateTime.parse(p.getValueAsString()); }
    });
    time.addDeserializer(LocalDate.class, new StdDeserializer<LocalDate>(LocalDate.class) {
      @Override public LocalDate deserialize(JsonParser p, DeserializationContext c) throws IOException { return LocalDate.parse(p.getValueAsString()); }
    });
    mapper.registerModule(time);
    mapper.registerModule(new OptionalModule());
    return mapper;
  }

  // java.util.Optional as a reference type: empty is null, present is its value.
  static final class OptionalModule extends SimpleModule {
    OptionalModule() { super("optional"); }
    @Override public void setupModule(SetupContext context) {
      super.setupModule(context);
      context.addTypeModifier(new TypeModifier() {
        @Override public JavaType modifyType(JavaType type, Type jdkType, TypeBindings bindings, TypeFactory typeFactory) {
          if (type.isReferenceType() || type.isContainerType() || type.getRawClass() != Optional.class) return type;
          return ReferenceType.upgradeFrom(type, type.containedTypeOrUnknown(0));
        }
      });
      context.addDeserializers(new Deserializers.Base() {
        @Override public JsonDeserializer<?> findReferenceDeserializer(ReferenceType refType, DeserializationConfig config, BeanDescription beanDesc, TypeDeserializer contentTypeDeserializer, JsonDeserializer<?> contentDeserializer) {
          return refType.hasRawClass(Optional.class) ? new OptionalDeserializer(refType, null, contentTypeDeserializer, contentDeserializer) : null;
        }
      });
      context.addSerializers(new Serializers.Base() {
        @Override public JsonSerializer<?> findReferenceSerializer(SerializationConfig config, ReferenceType refType, BeanDescription beanDesc, TypeSerializer contentTypeSerializer, JsonSerializer<Object> contentValueSerializer) {
          return refType.hasRawClass(Optional.class) ? new OptionalSerializer(refType, contentTypeSerializer, contentValueSerializer) : null;
        }
      });
    }
  }

  static final class OptionalDeserializer extends ReferenceTypeDeserializer<Optional<?>> {
    OptionalDeserializer(JavaType fullType, ValueInstantiator inst, TypeDeserializer typeDeser, JsonDeserializer<?> deser) { super(fullType, inst, typeDeser, deser); }
    @Override protected OptionalDeserializer withResolved(TypeDeserializer typeDeser, JsonDeserializer<?> valueDeser) { return new OptionalDeserializer(_fullType, _valueInstantiator, typeDeser, valueDeser); }
    @Override public Optional<?> getNullValue(DeserializationContext ctxt) { return Optional.empty(); }
    @Override public Object getEmptyValue(DeserializationContext ctxt) { return Optional.empty(); }
    @Override public Optional<?> referenceValue(Object contents) { return Optional.ofNullable(contents); }
    @Override public Object getReferenced(Optional<?> reference) { return reference.orElse(null); }
    @Override public Optional<?> updateReference(Optional<?> reference, Object contents) { return Optional.ofNullable(contents); }
  }

  static final class OptionalSerializer extends ReferenceTypeSerializer<Optional<?>> {
    OptionalSerializer(ReferenceType fullType, TypeSerializer vts, JsonSerializer<Object> ser) { super(fullType, true, vts, ser); }
    private OptionalSerializer(OptionalSerializer base, BeanProperty property, TypeSerializer vts, JsonSerializer<?> valueSer, NameTransformer unwrapper, Object suppressableValue, boolean suppressNulls) {
      super(base, property, vts, valueSer, unwrapper, suppressableValue, suppressNulls);
    }
    @Override protected ReferenceTypeSerializer<Optional<?>> withResolved(BeanProperty prop, TypeSerializer vts, JsonSerializer<?> valueSer, NameTransformer unwrapper) {
      return new OptionalSerializer(this, prop, vts, valueSer, unwrapper, _suppressableValue, _suppressNulls);
    }
    @Override public ReferenceTypeSerializer<Optional<?>> withContentInclusion(Object suppressableValue, boolean suppressNulls) {
      return new OptionalSerializer(this, _property, _valueTypeSerializer, _valueSerializer, _unwrapper, suppressableValue, suppressNulls);
    }
    @Override protected boolean _isValuePresent(Optional<?> value) { return value.isPresent(); }
    @Override protected Object _getReferenced(Optional<?> value) { return value.get(); }
    @Override protected Object _getReferencedIfPresent(Optional<?> value) { return value.orElse(null); }
  }
}
